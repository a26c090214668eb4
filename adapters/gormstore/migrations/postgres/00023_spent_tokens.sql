-- +goose Up
-- The console's spent form tokens, by the SHA-256 of their nonce, until
-- they expire: a token is single use on every replica.
CREATE TABLE spent_tokens (
    hash       bytea       NOT NULL PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX spent_tokens_expires_at_idx ON spent_tokens (expires_at);

-- +goose Down
DROP TABLE spent_tokens;
