-- +goose Up
-- Foreign keys are enforced because every connection sets foreign_keys(1)
-- (see sqlitePragmas in db.go).
CREATE TABLE sessions (
    id          TEXT     NOT NULL PRIMARY KEY,
    user_id     TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash  TEXT     NOT NULL,
    remember_me BOOLEAN  NOT NULL DEFAULT FALSE,
    ip_address  TEXT     NOT NULL DEFAULT '',
    user_agent  TEXT     NOT NULL DEFAULT '',
    expires_at  DATETIME NOT NULL,
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL
);
CREATE UNIQUE INDEX sessions_token_hash_key ON sessions (token_hash);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

CREATE TABLE credentials (
    user_id         TEXT     NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    hash            TEXT     NOT NULL,
    failed_attempts INTEGER  NOT NULL DEFAULT 0,
    locked_until    DATETIME NULL,
    updated_at      DATETIME NOT NULL
);

CREATE TABLE verifications (
    id         TEXT     NOT NULL PRIMARY KEY,
    purpose    TEXT     NOT NULL,
    token_hash TEXT     NOT NULL,
    user_id    TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email      TEXT     NOT NULL,
    expires_at DATETIME NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX verifications_token_hash_key ON verifications (token_hash);
CREATE INDEX verifications_user_id_purpose_idx ON verifications (user_id, purpose);
CREATE INDEX verifications_expires_at_idx ON verifications (expires_at);

-- +goose Down
DROP TABLE verifications;
DROP TABLE credentials;
DROP TABLE sessions;
