-- Several replicas (issue 15): what the async store port needs beyond the first schema, so SQLite
-- and PostgreSQL hold the same data. With one SQLite process these tables stay small: one
-- replica, and place leases only while it answers.

-- The replica that streams a reply; a replica whose heartbeat stopped has its open replies taken
-- over by another. Rows written before this migration belong to '' (the single process of old).
ALTER TABLE replies_in_flight ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX replies_in_flight_owner ON replies_in_flight (owner, state);

-- One row per replica, rewritten by its heartbeat.
CREATE TABLE replicas (
  replica_id    TEXT    PRIMARY KEY,
  started_at    INTEGER NOT NULL,            -- epoch ms of its first heartbeat
  heartbeat_at  INTEGER NOT NULL             -- epoch ms
);

-- Who answers in a place right now, so replies in one place keep their order across replicas.
-- Taken over when both the lease's last renewal and its holder's heartbeat are older than the lease.
CREATE TABLE place_leases (
  place_key    TEXT    PRIMARY KEY,
  holder       TEXT    NOT NULL,
  acquired_at  INTEGER NOT NULL,
  renewed_at   INTEGER NOT NULL
);
