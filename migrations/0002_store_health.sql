-- One row the storage health probe rewrites every few seconds: a real committed write proves the
-- database file can still be written (a rolled-back transaction would not catch a full disk).
CREATE TABLE store_health (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  probed_at  INTEGER NOT NULL                 -- epoch ms
);
