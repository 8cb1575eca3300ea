-- Placeholder on the `stopfb` branch only, so that 0005_feedback applies without a gap: the
-- PostgreSQL branch owns 0004. Delete this file when merging.
SELECT 1;
