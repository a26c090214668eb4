-- +goose Up
-- Federation: signing in with an account at an upstream identity provider.
-- Secrets are kept only sealed (encrypted under keys derived from the
-- service secrets) or hashed: sealed_client_secret, sealed_tokens and
-- sealed_secrets are opaque to the store, and a sign-in state is stored by
-- the SHA-256 of its state parameter.

-- The upstream providers, registered at runtime. The endpoints are
-- overrides ('' when discovery or the preset gives them); scopes is a JSON
-- array of scope tokens. A provider of an organization (organization_id
-- set) is that organization's enterprise SSO and goes with it; default_role
-- is the role its new users join with ('' for a provider of the service).
CREATE TABLE identity_providers (
    id                   TEXT     NOT NULL PRIMARY KEY,
    preset               TEXT     NOT NULL CHECK (preset IN ('oidc', 'google', 'microsoft', 'gitlab', 'github')),
    name                 TEXT     NOT NULL,
    issuer               TEXT     NOT NULL DEFAULT '',
    client_id            TEXT     NOT NULL,
    sealed_client_secret BLOB     NOT NULL CHECK (length(sealed_client_secret) > 0),
    authorization_url    TEXT     NOT NULL DEFAULT '',
    token_url            TEXT     NOT NULL DEFAULT '',
    userinfo_url         TEXT     NOT NULL DEFAULT '',
    jwks_url             TEXT     NOT NULL DEFAULT '',
    api_url              TEXT     NOT NULL DEFAULT '',
    scopes               TEXT     NOT NULL CHECK (json_valid(scopes) AND json_type(scopes) = 'array'),
    trusted_for_linking  BOOLEAN  NOT NULL DEFAULT FALSE,
    enabled              BOOLEAN  NOT NULL DEFAULT FALSE,
    organization_id      TEXT     NULL REFERENCES organizations (id) ON DELETE CASCADE,
    default_role         TEXT     NOT NULL DEFAULT '' CHECK (default_role IN ('', 'member', 'admin')),
    require_sso          BOOLEAN  NOT NULL DEFAULT FALSE,
    created_at           DATETIME NOT NULL,
    updated_at           DATETIME NOT NULL
);
-- The foreign key's ON DELETE CASCADE.
CREATE INDEX identity_providers_organization_id_idx ON identity_providers (organization_id);

-- The domains an organization's provider routes sign-ins of: a domain
-- routes to one provider at most (identity_provider_domains_domain_id_key,
-- which also finds the provider of an address's domain). Deleting the
-- provider or the domain removes the binding.
CREATE TABLE identity_provider_domains (
    provider_id TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    domain_id   TEXT NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    PRIMARY KEY (provider_id, domain_id)
);
CREATE UNIQUE INDEX identity_provider_domains_domain_id_key ON identity_provider_domains (domain_id);

-- The upstream identities tied to users, keyed by (provider, subject),
-- never by e-mail alone. scopes is a JSON array of the granted scopes;
-- sealed_tokens holds the provider's tokens sealed together (NULL when none
-- were kept); an expiry is NULL when unknown.
CREATE TABLE linked_accounts (
    id                       TEXT     NOT NULL PRIMARY KEY,
    user_id                  TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider_id              TEXT     NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    subject                  TEXT     NOT NULL CHECK (subject <> ''),
    email                    TEXT     NOT NULL DEFAULT '',
    scopes                   TEXT     NOT NULL CHECK (json_valid(scopes) AND json_type(scopes) = 'array'),
    sealed_tokens            BLOB     NULL,
    access_token_expires_at  DATETIME NULL,
    refresh_token_expires_at DATETIME NULL,
    created_at               DATETIME NOT NULL,
    updated_at               DATETIME NOT NULL
);
-- The sign-in's lookup; it also serves the provider's ON DELETE CASCADE.
CREATE UNIQUE INDEX linked_accounts_provider_id_subject_key ON linked_accounts (provider_id, subject);
-- A user's accounts, oldest first, ties broken by id; it also serves the
-- user's ON DELETE CASCADE.
CREATE INDEX linked_accounts_user_id_created_at_idx ON linked_accounts (user_id, created_at, id);

-- The sign-ins (and links) in flight at upstream providers, by the SHA-256
-- of their state parameter, used once. sealed_secrets holds the PKCE
-- verifier and the nonce. A link names both the signed-in user (whose
-- deletion ends it) and their session, which the callback checks is still
-- live; a session is not a foreign key, so signing out leaves the state to
-- expire.
CREATE TABLE federation_states (
    id_hash         BLOB     NOT NULL PRIMARY KEY,
    provider_id     TEXT     NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    sealed_secrets  BLOB     NOT NULL CHECK (length(sealed_secrets) > 0),
    callback_url    TEXT     NOT NULL DEFAULT '',
    error_url       TEXT     NOT NULL DEFAULT '',
    new_user_url    TEXT     NOT NULL DEFAULT '',
    link_user_id    TEXT     NULL REFERENCES users (id) ON DELETE CASCADE,
    link_session_id TEXT     NULL,
    request_sign_up BOOLEAN  NOT NULL DEFAULT FALSE,
    expires_at      DATETIME NOT NULL,
    used_at         DATETIME NULL,
    CHECK ((link_user_id IS NULL) = (link_session_id IS NULL))
);
-- The foreign keys' cascades and the pruning of expired states.
CREATE INDEX federation_states_provider_id_idx ON federation_states (provider_id);
CREATE INDEX federation_states_link_user_id_idx ON federation_states (link_user_id);
CREATE INDEX federation_states_expires_at_idx ON federation_states (expires_at);

-- +goose Down
DROP TABLE federation_states;
DROP TABLE linked_accounts;
DROP TABLE identity_provider_domains;
DROP TABLE identity_providers;
