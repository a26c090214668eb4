-- +goose Up
-- Service keys and their secrets. A secret is kept only as its hash, which is
-- the primary key: every trusted request looks its key up by it. scopes is
-- the key's scopes separated by spaces.
CREATE TABLE service_keys (
    id           TEXT     NOT NULL PRIMARY KEY,
    name         TEXT     NOT NULL,
    scopes       TEXT     NOT NULL,
    last4        TEXT     NOT NULL DEFAULT '',
    created_by   TEXT     NOT NULL DEFAULT '',
    expires_at   DATETIME NULL,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME NULL,
    revoked_at   DATETIME NULL
);
CREATE INDEX service_keys_created_at_idx ON service_keys (created_at);

CREATE TABLE service_key_secrets (
    hash       TEXT     NOT NULL PRIMARY KEY,
    key_id     TEXT     NOT NULL REFERENCES service_keys (id) ON DELETE CASCADE,
    expires_at DATETIME NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX service_key_secrets_key_id_idx ON service_key_secrets (key_id);
CREATE INDEX service_key_secrets_expires_at_idx ON service_key_secrets (expires_at);

-- The audit log refers to nothing: its entries outlive the users and keys
-- they name. It is append-only, and the triggers below enforce that for
-- every client of the database, not only for Gatehouse.
CREATE TABLE audit_log (
    id          TEXT     NOT NULL PRIMARY KEY,
    occurred_at DATETIME NOT NULL,
    actor_type  TEXT     NOT NULL DEFAULT '',
    actor_id    TEXT     NOT NULL DEFAULT '',
    action      TEXT     NOT NULL DEFAULT '',
    target_type TEXT     NOT NULL DEFAULT '',
    target_id   TEXT     NOT NULL DEFAULT '',
    request_id  TEXT     NOT NULL DEFAULT '',
    ip_address  TEXT     NOT NULL DEFAULT '',
    outcome     TEXT     NOT NULL DEFAULT '',
    code        TEXT     NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_occurred_at_idx ON audit_log (occurred_at, id);
CREATE INDEX audit_log_actor_id_idx ON audit_log (actor_id, occurred_at, id);
CREATE INDEX audit_log_action_idx ON audit_log (action, occurred_at, id);
CREATE INDEX audit_log_target_id_idx ON audit_log (target_id, occurred_at, id);

-- +goose StatementBegin
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER audit_log_no_delete;
DROP TRIGGER audit_log_no_update;
DROP TABLE audit_log;
DROP TABLE service_key_secrets;
DROP TABLE service_keys;
