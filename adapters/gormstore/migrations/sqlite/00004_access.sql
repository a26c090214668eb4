-- +goose Up
-- Platform administration on users: role is the user's platform roles,
-- comma-separated as Better Auth stores them; a ban without an expiry
-- (ban_expires NULL) lasts until it is lifted.
ALTER TABLE users ADD COLUMN role        TEXT     NOT NULL DEFAULT 'user';
ALTER TABLE users ADD COLUMN banned      BOOLEAN  NOT NULL DEFAULT FALSE;
ALTER TABLE users ADD COLUMN ban_reason  TEXT     NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN ban_expires DATETIME NULL;
-- The admin's user list sorts by creation by default, ties broken by id.
CREATE INDEX users_created_at_idx ON users (created_at, id);

-- A session's active organization is cleared when the organization goes; an
-- impersonation session dies with the administrator who started it. SQLite
-- adds a column with a REFERENCES clause only when its default is NULL, as
-- these are; the foreign keys are enforced because every connection sets
-- foreign_keys(1) (see sqlitePragmas in db.go).
ALTER TABLE sessions ADD COLUMN active_organization_id TEXT NULL REFERENCES organizations (id) ON DELETE SET NULL;
ALTER TABLE sessions ADD COLUMN impersonated_by        TEXT NULL REFERENCES users (id) ON DELETE CASCADE;
CREATE INDEX sessions_active_organization_id_idx ON sessions (active_organization_id);
CREATE INDEX sessions_impersonated_by_idx ON sessions (impersonated_by);

-- +goose Down
DROP INDEX sessions_impersonated_by_idx;
DROP INDEX sessions_active_organization_id_idx;
ALTER TABLE sessions DROP COLUMN impersonated_by;
ALTER TABLE sessions DROP COLUMN active_organization_id;

DROP INDEX users_created_at_idx;
ALTER TABLE users DROP COLUMN ban_expires;
ALTER TABLE users DROP COLUMN ban_reason;
ALTER TABLE users DROP COLUMN banned;
ALTER TABLE users DROP COLUMN role;
