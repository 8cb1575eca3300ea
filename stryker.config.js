// `npm run mutation`: StrykerJS over the pure modules where a silent bug hurts most (split and
// reply text, Slack and Discord rendering and mention handling, Slack signature verification,
// allowlists, conversation renewal). Not in CI: it is slow. One module at a time:
//   npm run mutation -- --mutate src/core/reply/split.ts
// Reports: reports/mutation/ (HTML and JSON, gitignored) and a clear-text table on stdout.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // Only the unit tests of these modules (a dedicated vitest config); perTest coverage then runs,
  // for each mutant, only the tests that reach it.
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/core/reply/split.ts',
    'src/core/reply/reply-text.ts',
    'src/connectors/slack/render.ts',
    // Line ranges (stripBotMention, threadName, the signature steps and singleHeader) are line
    // numbers: check them when those files change (docs/mutation.md).
    // Discord: the bot-mention strip and the thread name (replies themselves carry
    // allowed_mentions, checked over every write by the e2e suites).
    'src/connectors/discord/events.ts:51-56',
    'src/connectors/discord/events.ts:152-159',
    // Slack HTTP receiver: the signature headers, the replay window and the HMAC check.
    'src/connectors/slack/http-receiver.ts:104-127',
    'src/connectors/slack/http-receiver.ts:175-178',
    // The allowlist and the visible-text check (ALLOW_ALL to hasVisibleText in the admission step).
    'src/core/intake/admission.ts:168-201',
    'src/core/reply/conversations.ts',
  ],
  ignorePatterns: ['dist', 'dist-bench', 'data', 'coverage', 'reports', 'bench/results', '*.db'],
  // Two shared cores: one test process at a time.
  concurrency: 1,
  // A mutant that loops forever (split's cut loops) counts as detected once it times out; 5 s is
  // well above any unit run of these modules.
  timeoutMS: 5_000,
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
  thresholds: { high: 90, low: 85, break: null },
};
