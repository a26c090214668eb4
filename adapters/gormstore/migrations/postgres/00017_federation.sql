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
-- The list is read in id order, byte by byte (the order every store uses):
-- the table is small, and sorted in the "C" collation.
CREATE TABLE identity_providers (
    id                   text        NOT NULL PRIMARY KEY,
    preset               text        NOT NULL CHECK (preset IN ('oidc', 'google', 'microsoft', 'gitlab', 'github')),
    name                 text        NOT NULL,
    issuer               text        NOT NULL DEFAULT '',
    client_id            text        NOT NULL,
    sealed_client_secret bytea       NOT NULL CHECK (length(sealed_client_secret) > 0),
    authorization_url    text        NOT NULL DEFAULT '',
    token_url            text        NOT NULL DEFAULT '',
    userinfo_url         text        NOT NULL DEFAULT '',
    jwks_url             text        NOT NULL DEFAULT '',
    api_url              text        NOT NULL DEFAULT '',
    scopes               jsonb       NOT NULL CHECK (jsonb_typeof(scopes) = 'array'),
    trusted_for_linking  boolean     NOT NULL DEFAULT false,
    enabled              boolean     NOT NULL DEFAULT false,
    organization_id      text        NULL REFERENCES organizations (id) ON DELETE CASCADE,
    default_role         text        NOT NULL DEFAULT '' CHECK (default_role IN ('', 'member', 'admin')),
    require_sso          boolean     NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
-- The foreign key's ON DELETE CASCADE.
CREATE INDEX identity_providers_organization_id_idx ON identity_providers (organization_id);

-- The domains an organization's provider routes sign-ins of: a domain
-- routes to one provider at most (identity_provider_domains_domain_id_key,
-- which also finds the provider of an address's domain). Deleting the
-- provider or the domain removes the binding.
CREATE TABLE identity_provider_domains (
    provider_id text NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    domain_id   text NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    PRIMARY KEY (provider_id, domain_id)
);
CREATE UNIQUE INDEX identity_provider_domains_domain_id_key ON identity_provider_domains (domain_id);

-- The upstream identities tied to users, keyed by (provider, subject),
-- never by e-mail alone. scopes is a JSON array of the granted scopes;
-- sealed_tokens holds the provider's tokens sealed together (NULL when none
-- were kept); an expiry is NULL when unknown.
CREATE TABLE linked_accounts (
    id                       text        NOT NULL PRIMARY KEY,
    user_id                  text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider_id              text        NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    subject                  text        NOT NULL CHECK (subject <> ''),
    email                    text        NOT NULL DEFAULT '',
    scopes                   jsonb       NOT NULL CHECK (jsonb_typeof(scopes) = 'array'),
    sealed_tokens            bytea       NULL,
    access_token_expires_at  timestamptz NULL,
    refresh_token_expires_at timestamptz NULL,
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL
);
-- The sign-in's lookup; it also serves the provider's ON DELETE CASCADE.
CREATE UNIQUE INDEX linked_accounts_provider_id_subject_key ON linked_accounts (provider_id, subject);
-- A user's accounts, oldest first, ties broken by id in byte order (the
-- order every store uses), so id is indexed in the "C" collation that the
-- list's ORDER BY names; it also serves the user's ON DELETE CASCADE.
CREATE INDEX linked_accounts_user_id_created_at_idx ON linked_accounts (user_id, created_at, id COLLATE "C");

-- The sign-ins (and links) in flight at upstream providers, by the SHA-256
-- of their state parameter, used once. sealed_secrets holds the PKCE
-- verifier and the nonce. A link names both the signed-in user (whose
-- deletion ends it) and their session, which the callback checks is still
-- live; a session is not a foreign key, so signing out leaves the state to
-- expire.
CREATE TABLE federation_states (
    id_hash         bytea       NOT NULL PRIMARY KEY,
    provider_id     text        NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    sealed_secrets  bytea       NOT NULL CHECK (length(sealed_secrets) > 0),
    callback_url    text        NOT NULL DEFAULT '',
    error_url       text        NOT NULL DEFAULT '',
    new_user_url    text        NOT NULL DEFAULT '',
    link_user_id    text        NULL REFERENCES users (id) ON DELETE CASCADE,
    link_session_id text        NULL,
    request_sign_up boolean     NOT NULL DEFAULT false,
    expires_at      timestamptz NOT NULL,
    used_at         timestamptz NULL,
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
