import { defineConfig } from 'vitest/config';

// The unit tests that cover the modules `npm run mutation` mutates (see stryker.config.json).
// Stryker runs only these: the integration and resilience suites are too slow to rerun per
// mutant, and a mutant that only they would catch is one a unit test should catch too.
export default defineConfig({
  test: {
    include: [
      'src/**/*.mutants.test.ts',
      'src/core/reply/split.test.ts',
      // Reads split's work counters and cost bounds (under 1 s).
      'src/core/reply/split-linear.test.ts',
      'src/core/reply/reply-writer-fences.test.ts',
      'src/core/reply/pump.test.ts',
      'src/core/reply/reply-writer.test.ts',
      'src/core/intake/relay.test.ts',
      'src/core/intake/admission-visible-text.test.ts',
      'src/core/reply/conversations.test.ts',
      'src/connectors/slack/render.test.ts',
      'src/connectors/slack/table-blocks.test.ts',
      'src/connectors/slack/http-receiver.test.ts',
      'src/connectors/discord/discord.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
