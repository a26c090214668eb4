-- +goose Up
-- Leases of the singleton jobs (the purge, for one): the replica named
-- holder runs the job named name until expires_at, renewing the lease as it
-- runs; once it has ended, another replica may take it.
CREATE TABLE leases (
    name       TEXT     NOT NULL PRIMARY KEY,
    holder     TEXT     NOT NULL,
    expires_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE leases;
