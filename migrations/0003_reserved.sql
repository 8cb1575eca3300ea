-- Placeholder on the `stopfb` branch only, so that 0005_feedback applies without a gap: the
-- scheduler's and the PostgreSQL branches own 0003. Delete this file when merging.
SELECT 1;
