-- As SQLite's migration 0010: the columns by which what grows with use is pruned (docs/storage.md).
-- PostgreSQL's autovacuum reuses the space of deleted rows.
CREATE INDEX conversations_last_used_at ON conversations (last_used_at);
CREATE INDEX place_handover_released_at ON place_handover (released_at);
CREATE INDEX feedback_votes_voted_at ON feedback_votes (voted_at);
CREATE INDEX learned_budgets_updated_at ON learned_budgets (updated_at);
