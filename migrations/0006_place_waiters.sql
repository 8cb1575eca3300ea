-- The line of messages waiting to be answered in a place, across replicas (issue 15). A message
-- joins when it is admitted; a replica may take a place's lease for a message only when no older
-- message of a live replica waits there, so a place's replies keep their arrival order even when
-- its messages reach different replicas.
CREATE TABLE place_waiters (
  place_key   TEXT    NOT NULL,
  ticket      TEXT    NOT NULL,              -- the message's event id
  replica_id  TEXT    NOT NULL,              -- the replica that will answer it
  arrived_at  INTEGER NOT NULL,              -- epoch ms, when the replica received it
  PRIMARY KEY (place_key, ticket)
);

-- What the replica that answered in a place last wrote there, for the next one: the place's
-- per-channel rate-limit buckets (a channel's posts) go with the place, not split between replicas.
CREATE TABLE place_handover (
  place_key   TEXT    PRIMARY KEY,
  replica_id  TEXT    NOT NULL,
  writes      TEXT    NOT NULL,              -- JSON [{bucket, at}]
  released_at INTEGER NOT NULL
);

-- The reply a lease holder is writing in the place and who asked for it, so a Stop pressed or
-- `stop` written at another replica can be checked there and passed to the holder.
ALTER TABLE place_leases ADD COLUMN reply_key TEXT;
ALTER TABLE place_leases ADD COLUMN asker_id TEXT;
