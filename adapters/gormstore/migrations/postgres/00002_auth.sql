-- +goose Up
CREATE TABLE sessions (
    id          text        NOT NULL PRIMARY KEY,
    user_id     text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash  text        NOT NULL,
    remember_me boolean     NOT NULL DEFAULT false,
    ip_address  text        NOT NULL DEFAULT '',
    user_agent  text        NOT NULL DEFAULT '',
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE UNIQUE INDEX sessions_token_hash_key ON sessions (token_hash);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

CREATE TABLE credentials (
    user_id         text        NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    hash            text        NOT NULL,
    failed_attempts integer     NOT NULL DEFAULT 0,
    locked_until    timestamptz NULL,
    updated_at      timestamptz NOT NULL
);

CREATE TABLE verifications (
    id         text        NOT NULL PRIMARY KEY,
    purpose    text        NOT NULL,
    token_hash text        NOT NULL,
    user_id    text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email      text        NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX verifications_token_hash_key ON verifications (token_hash);
CREATE INDEX verifications_user_id_purpose_idx ON verifications (user_id, purpose);
CREATE INDEX verifications_expires_at_idx ON verifications (expires_at);

-- +goose Down
DROP TABLE verifications;
DROP TABLE credentials;
DROP TABLE sessions;
