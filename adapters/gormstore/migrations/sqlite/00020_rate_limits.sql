-- +goose Up
-- Nothing to do. PostgreSQL's 00020 makes the table of rate-limit windows
-- that replicas on one database share; SQLite is one process, which counts
-- its windows in memory. The version is kept so that both dialects number
-- their migrations alike.
SELECT 1;

-- +goose Down
SELECT 1;
