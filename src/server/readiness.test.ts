import { describe, expect, it } from 'vitest';
import { notReady, readinessFrom } from './readiness.js';

describe('readinessFrom', () => {
  it('is ready only when every probe returns true', () => {
    let connected = false;
    const readiness = readinessFrom({ database: () => true, discord: () => connected || 'gateway not connected' });
    expect(readiness()).toEqual({ ready: false, checks: { database: true, discord: 'gateway not connected' } });
    connected = true;
    expect(readiness()).toEqual({ ready: true, checks: { database: true, discord: true } });
  });

  it('turns a throwing probe into a not-ready reason', () => {
    const readiness = readinessFrom({
      database: () => {
        throw new Error('database closed');
      },
    });
    const report = readiness();
    expect(report).toEqual({ ready: false, checks: { database: 'database closed' } });
    expect(notReady(report.checks)).toEqual(['database']);
  });
});
