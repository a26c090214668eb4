-- +goose Up
-- The OpenID provider's storage. Clients are registered by administrators;
-- redirect_uris and post_logout_redirect_uris are JSON arrays of the URIs,
-- compared exactly. A confidential client keeps only the SHA-256 of its
-- secret (secret_hash); a public client has none (''). Scopes are separated
-- by spaces (scope tokens contain none).
CREATE TABLE oauth_clients (
    id                        text        NOT NULL PRIMARY KEY,
    name                      text        NOT NULL,
    type                      text        NOT NULL CHECK (type IN ('public', 'confidential')),
    redirect_uris             jsonb       NOT NULL CHECK (jsonb_typeof(redirect_uris) = 'array'),
    post_logout_redirect_uris jsonb       NOT NULL CHECK (jsonb_typeof(post_logout_redirect_uris) = 'array'),
    first_party               boolean     NOT NULL DEFAULT false,
    secret_hash               text        NOT NULL DEFAULT '',
    secret_last4              text        NOT NULL DEFAULT '',
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL
);
-- The list reads newest first, ties broken by id in byte order (the order
-- every store uses), so id is indexed in the "C" collation.
CREATE INDEX oauth_clients_created_at_idx ON oauth_clients (created_at, id COLLATE "C");

-- Authorization codes, by the hash of the code. consumed_at and grant_id
-- are set by the one exchange that wins; grant_id names the grant revoked
-- if the code comes again.
CREATE TABLE oauth_codes (
    hash                  text        NOT NULL PRIMARY KEY,
    client_id             text        NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id               text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri          text        NOT NULL,
    scopes                text        NOT NULL,
    nonce                 text        NOT NULL DEFAULT '',
    code_challenge        text        NOT NULL DEFAULT '',
    code_challenge_method text        NOT NULL DEFAULT '',
    auth_time             timestamptz NULL,
    created_at            timestamptz NOT NULL,
    expires_at            timestamptz NOT NULL,
    consumed_at           timestamptz NULL,
    grant_id              text        NOT NULL DEFAULT ''
);
-- The foreign keys' cascades and the pruning of expired codes.
CREATE INDEX oauth_codes_client_id_idx ON oauth_codes (client_id);
CREATE INDEX oauth_codes_user_id_idx ON oauth_codes (user_id);
CREATE INDEX oauth_codes_expires_at_idx ON oauth_codes (expires_at);

-- Grants: user_id is NULL for client credentials.
CREATE TABLE oauth_grants (
    id         text        NOT NULL PRIMARY KEY,
    client_id  text        NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id    text        NULL REFERENCES users (id) ON DELETE CASCADE,
    scopes     text        NOT NULL,
    auth_time  timestamptz NULL,
    nonce      text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz NULL
);
CREATE INDEX oauth_grants_client_id_idx ON oauth_grants (client_id);
CREATE INDEX oauth_grants_user_id_idx ON oauth_grants (user_id);
CREATE INDEX oauth_grants_expires_at_idx ON oauth_grants (expires_at);

-- Refresh tokens, by the hash of the token; a used one stays (used_at set)
-- so that presenting it again is recognised as reuse.
CREATE TABLE oauth_refresh_tokens (
    hash       text        NOT NULL PRIMARY KEY,
    grant_id   text        NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz NULL
);
CREATE INDEX oauth_refresh_tokens_grant_id_idx ON oauth_refresh_tokens (grant_id);
CREATE INDEX oauth_refresh_tokens_expires_at_idx ON oauth_refresh_tokens (expires_at);

-- What each user allowed each client.
CREATE TABLE oauth_consents (
    user_id    text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  text        NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes     text        NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, client_id)
);
CREATE INDEX oauth_consents_client_id_idx ON oauth_consents (client_id);

-- +goose Down
DROP TABLE oauth_consents;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_grants;
DROP TABLE oauth_codes;
DROP TABLE oauth_clients;
