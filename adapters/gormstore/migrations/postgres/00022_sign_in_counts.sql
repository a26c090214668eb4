-- +goose Up
-- Sign-ins counted by hour (UTC, the start of the hour) and outcome
-- (ports.SignInOutcome: success, failure, locked, banned, …), for every
-- replica on this database: one upsert per sign-in adds one to its row.
-- The overview reads a range of hours through the primary key, and the
-- purge job deletes the hours older than its retention through it too.
CREATE TABLE sign_in_counts (
    hour    timestamptz NOT NULL,
    outcome text        NOT NULL CHECK (outcome <> ''),
    total   bigint      NOT NULL CHECK (total > 0),
    PRIMARY KEY (hour, outcome)
);

-- +goose Down
DROP TABLE sign_in_counts;
