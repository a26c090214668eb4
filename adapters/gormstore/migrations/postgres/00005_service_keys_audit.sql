-- +goose Up
-- Service keys and their secrets. A secret is kept only as its hash, which is
-- the primary key: every trusted request looks its key up by it. scopes is
-- the key's scopes separated by spaces.
CREATE TABLE service_keys (
    id           text        NOT NULL PRIMARY KEY,
    name         text        NOT NULL,
    scopes       text        NOT NULL,
    last4        text        NOT NULL DEFAULT '',
    created_by   text        NOT NULL DEFAULT '',
    expires_at   timestamptz NULL,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz NULL,
    revoked_at   timestamptz NULL
);
CREATE INDEX service_keys_created_at_idx ON service_keys (created_at);

CREATE TABLE service_key_secrets (
    hash       text        NOT NULL PRIMARY KEY,
    key_id     text        NOT NULL REFERENCES service_keys (id) ON DELETE CASCADE,
    expires_at timestamptz NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX service_key_secrets_key_id_idx ON service_key_secrets (key_id);
CREATE INDEX service_key_secrets_expires_at_idx ON service_key_secrets (expires_at);

-- The audit log refers to nothing: its entries outlive the users and keys
-- they name. It is append-only, and the trigger below enforces that for
-- every client of the database, not only for Gatehouse: it refuses every
-- UPDATE, DELETE and TRUNCATE statement on the table, even one that would
-- match no row.
CREATE TABLE audit_log (
    id          text        NOT NULL PRIMARY KEY,
    occurred_at timestamptz NOT NULL,
    actor_type  text        NOT NULL DEFAULT '',
    actor_id    text        NOT NULL DEFAULT '',
    action      text        NOT NULL DEFAULT '',
    target_type text        NOT NULL DEFAULT '',
    target_id   text        NOT NULL DEFAULT '',
    request_id  text        NOT NULL DEFAULT '',
    ip_address  text        NOT NULL DEFAULT '',
    outcome     text        NOT NULL DEFAULT '',
    code        text        NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_occurred_at_idx ON audit_log (occurred_at, id);
CREATE INDEX audit_log_actor_id_idx ON audit_log (actor_id, occurred_at, id);
CREATE INDEX audit_log_action_idx ON audit_log (action, occurred_at, id);
CREATE INDEX audit_log_target_id_idx ON audit_log (target_id, occurred_at, id);

-- +goose StatementBegin
CREATE FUNCTION audit_log_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- +goose Down
DROP TRIGGER audit_log_append_only ON audit_log;
DROP FUNCTION audit_log_append_only();
DROP TABLE audit_log;
DROP TABLE service_key_secrets;
DROP TABLE service_keys;
