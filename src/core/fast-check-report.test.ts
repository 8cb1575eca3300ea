import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// A failing property must say how to replay it: fast-check's report names the seed and the path
// of the shrunk counterexample. This fails if a global setting (fc.configureGlobal, a custom
// reporter) ever hides them from the property tests.

describe('fast-check failure reports', () => {
  it('print the seed and the path', () => {
    let message = '';
    try {
      fc.assert(
        fc.property(fc.integer(), (n) => n < 10),
        { seed: 42 },
      );
    } catch (err) {
      message = err instanceof Error ? err.message : String(err);
    }
    expect(message).toMatch(/seed: 42\b/);
    expect(message).toMatch(/path: "[\d:]+"/);
    expect(message).toMatch(/Counterexample: \[10\]/);
  });
});
