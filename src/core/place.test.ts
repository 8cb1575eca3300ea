import { describe, expect, it } from 'vitest';
import { expectedOf } from './place.js';

describe('expectedOf', () => {
  it('says none, a mapping without an upstream id yet, or the id', () => {
    expect(expectedOf(undefined)).toBeUndefined();
    expect(expectedOf({ upstreamId: undefined })).toBeNull();
    expect(expectedOf({ upstreamId: 'c1' })).toBe('c1');
  });
});
