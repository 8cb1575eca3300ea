-- The line of messages waiting to be answered in a place, across replicas. A message joins when
-- it is admitted; a replica may take a place's lease for a message only when no older message of
-- a live replica waits there, so a place's replies keep their arrival order across replicas.
CREATE TABLE place_waiters (
  place_key   TEXT    NOT NULL,
  ticket      TEXT    NOT NULL,
  replica_id  TEXT    NOT NULL,
  arrived_at  BIGINT  NOT NULL,
  PRIMARY KEY (place_key, ticket)
);
