-- Months of uptime (issue 31): what grows with use is pruned (docs/storage.md), by these columns.
-- Freed pages go back to the file a few at a time (PRAGMA incremental_vacuum on a timer, never one
-- long VACUUM while serving): auto_vacuum INCREMENTAL. A new file gets it before its first table;
-- an existing one is converted by one VACUUM when the bridge opens it next (sqlite/index.ts).
PRAGMA auto_vacuum = INCREMENTAL;
CREATE INDEX conversations_last_used_at ON conversations (last_used_at);
CREATE INDEX place_handover_released_at ON place_handover (released_at);
CREATE INDEX feedback_votes_voted_at ON feedback_votes (voted_at);
CREATE INDEX learned_budgets_updated_at ON learned_budgets (updated_at);
