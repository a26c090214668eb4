-- +goose Up
-- The OpenID provider's storage. Clients are registered by administrators;
-- redirect_uris and post_logout_redirect_uris are JSON arrays of the URIs,
-- compared exactly. A confidential client keeps only the SHA-256 of its
-- secret (secret_hash); a public client has none (''). Scopes are separated
-- by spaces (scope tokens contain none).
CREATE TABLE oauth_clients (
    id                        TEXT     NOT NULL PRIMARY KEY,
    name                      TEXT     NOT NULL,
    type                      TEXT     NOT NULL CHECK (type IN ('public', 'confidential')),
    redirect_uris             TEXT     NOT NULL CHECK (json_valid(redirect_uris) AND json_type(redirect_uris) = 'array'),
    post_logout_redirect_uris TEXT     NOT NULL CHECK (json_valid(post_logout_redirect_uris) AND json_type(post_logout_redirect_uris) = 'array'),
    first_party               BOOLEAN  NOT NULL DEFAULT FALSE,
    secret_hash               TEXT     NOT NULL DEFAULT '',
    secret_last4              TEXT     NOT NULL DEFAULT '',
    created_at                DATETIME NOT NULL,
    updated_at                DATETIME NOT NULL
);
CREATE INDEX oauth_clients_created_at_idx ON oauth_clients (created_at, id);

-- Authorization codes, by the hash of the code. consumed_at and grant_id
-- are set by the one exchange that wins; grant_id names the grant revoked
-- if the code comes again.
CREATE TABLE oauth_codes (
    hash                  TEXT     NOT NULL PRIMARY KEY,
    client_id             TEXT     NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id               TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri          TEXT     NOT NULL,
    scopes                TEXT     NOT NULL,
    nonce                 TEXT     NOT NULL DEFAULT '',
    code_challenge        TEXT     NOT NULL DEFAULT '',
    code_challenge_method TEXT     NOT NULL DEFAULT '',
    auth_time             DATETIME NULL,
    created_at            DATETIME NOT NULL,
    expires_at            DATETIME NOT NULL,
    consumed_at           DATETIME NULL,
    grant_id              TEXT     NOT NULL DEFAULT ''
);
-- The foreign keys' cascades and the pruning of expired codes.
CREATE INDEX oauth_codes_client_id_idx ON oauth_codes (client_id);
CREATE INDEX oauth_codes_user_id_idx ON oauth_codes (user_id);
CREATE INDEX oauth_codes_expires_at_idx ON oauth_codes (expires_at);

-- Grants: user_id is NULL for client credentials.
CREATE TABLE oauth_grants (
    id         TEXT     NOT NULL PRIMARY KEY,
    client_id  TEXT     NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id    TEXT     NULL REFERENCES users (id) ON DELETE CASCADE,
    scopes     TEXT     NOT NULL,
    auth_time  DATETIME NULL,
    nonce      TEXT     NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    revoked_at DATETIME NULL
);
CREATE INDEX oauth_grants_client_id_idx ON oauth_grants (client_id);
CREATE INDEX oauth_grants_user_id_idx ON oauth_grants (user_id);
CREATE INDEX oauth_grants_expires_at_idx ON oauth_grants (expires_at);

-- Refresh tokens, by the hash of the token; a used one stays (used_at set)
-- so that presenting it again is recognised as reuse.
CREATE TABLE oauth_refresh_tokens (
    hash       TEXT     NOT NULL PRIMARY KEY,
    grant_id   TEXT     NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    used_at    DATETIME NULL
);
CREATE INDEX oauth_refresh_tokens_grant_id_idx ON oauth_refresh_tokens (grant_id);
CREATE INDEX oauth_refresh_tokens_expires_at_idx ON oauth_refresh_tokens (expires_at);

-- What each user allowed each client.
CREATE TABLE oauth_consents (
    user_id    TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  TEXT     NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes     TEXT     NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (user_id, client_id)
);
CREATE INDEX oauth_consents_client_id_idx ON oauth_consents (client_id);

-- +goose Down
DROP TABLE oauth_consents;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_grants;
DROP TABLE oauth_codes;
DROP TABLE oauth_clients;
