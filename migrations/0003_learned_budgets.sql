-- Learned rate-limit budgets (the scheduler's token buckets as the platforms taught them), so a
-- restart or another replica starts from what was learned rather than from a guess.
-- The scheduler's branch adds this migration too; the two are meant to be the same file.
CREATE TABLE IF NOT EXISTS learned_budgets (
  key           TEXT    PRIMARY KEY,
  rate_per_sec  REAL    NOT NULL,
  burst         REAL    NOT NULL,
  updated_at    INTEGER NOT NULL             -- epoch ms
);
