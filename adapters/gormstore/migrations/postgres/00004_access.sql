-- +goose Up
-- Platform administration on users: role is the user's platform roles,
-- comma-separated as Better Auth stores them; a ban without an expiry
-- (ban_expires NULL) lasts until it is lifted. The columns are added with
-- constant defaults, which PostgreSQL does without rewriting the table.
ALTER TABLE users
    ADD COLUMN role        text        NOT NULL DEFAULT 'user',
    ADD COLUMN banned      boolean     NOT NULL DEFAULT false,
    ADD COLUMN ban_reason  text        NOT NULL DEFAULT '',
    ADD COLUMN ban_expires timestamptz NULL;
-- The admin's user list sorts by creation by default, ties broken by id in
-- byte order (the order every store uses), so id is indexed in the "C"
-- collation that the list's ORDER BY names.
CREATE INDEX users_created_at_idx ON users (created_at, id COLLATE "C");

-- A session's active organization is cleared when the organization goes; an
-- impersonation session dies with the administrator who started it.
ALTER TABLE sessions
    ADD COLUMN active_organization_id text NULL REFERENCES organizations (id) ON DELETE SET NULL,
    ADD COLUMN impersonated_by        text NULL REFERENCES users (id) ON DELETE CASCADE;
CREATE INDEX sessions_active_organization_id_idx ON sessions (active_organization_id);
CREATE INDEX sessions_impersonated_by_idx ON sessions (impersonated_by);

-- +goose Down
DROP INDEX sessions_impersonated_by_idx;
DROP INDEX sessions_active_organization_id_idx;
ALTER TABLE sessions
    DROP COLUMN impersonated_by,
    DROP COLUMN active_organization_id;

DROP INDEX users_created_at_idx;
ALTER TABLE users
    DROP COLUMN ban_expires,
    DROP COLUMN ban_reason,
    DROP COLUMN banned,
    DROP COLUMN role;
