-- +goose Up
-- Rate-limit windows, counted here for every replica on this database when
-- no Redis is configured (gormstore.RateLimiter). One row per key and
-- window, updated in place by one upsert per request: the row is the
-- window's count and its end, and a hit after the end starts the window
-- again. Expired rows are deleted by the purge job.
--
-- UNLOGGED: the counts are worth less than the WAL they would cost on every
-- request. A crash empties the table and it is not copied to standbys, so
-- after a crash or a failover every client starts with fresh windows, as
-- after a restart of a single process. fillfactor leaves room on each page
-- for the updates to stay HOT (no index points at hits or expires_at).
CREATE UNLOGGED TABLE rate_limits (
    key        text        NOT NULL PRIMARY KEY,
    hits       integer     NOT NULL CHECK (hits > 0),
    expires_at timestamptz NOT NULL
) WITH (fillfactor = 70);

-- +goose Down
DROP TABLE rate_limits;
