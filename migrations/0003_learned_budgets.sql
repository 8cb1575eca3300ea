-- What the rate-limit scheduler learned per bucket (src/core/budget): a restart starts from these
-- numbers instead of relearning them by 429s. One row per bucket key, rewritten at most every few
-- seconds; per-channel buckets are `${workspaceBucketKey}#${channel}`.
CREATE TABLE learned_budgets (
  bucket_key          TEXT PRIMARY KEY,
  per_minute          REAL NOT NULL,     -- sustained writes per minute
  burst               REAL NOT NULL,     -- writes at once
  limited_at          INTEGER,           -- epoch ms of the last 429, if any
  limited_per_minute  REAL,              -- the rate assumed when it came
  updated_at          INTEGER NOT NULL   -- epoch ms
);
