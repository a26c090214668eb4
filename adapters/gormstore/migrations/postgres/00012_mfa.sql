-- +goose Up
-- Multi-factor authentication. Secrets, codes and challenge ids are kept
-- only sealed or hashed: sealed_secret is the TOTP secret encrypted under a
-- key derived from the service secret; code_hash, id_hash and otp_hash are
-- SHA-256 digests. Every row belongs to a user and goes with them.

-- A user's TOTP factor (at most one). last_used_step is the RFC 6238 time
-- step of the last accepted code: a code of that step or an earlier one is a
-- replay, refused by a conditional UPDATE.
CREATE TABLE totp_factors (
    user_id        text        NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    sealed_secret  bytea       NOT NULL CHECK (length(sealed_secret) > 0),
    verified       boolean     NOT NULL DEFAULT false,
    last_used_step bigint      NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL,
    verified_at    timestamptz NULL
);

-- Single-use backup codes; used_at is NULL while unused.
CREATE TABLE backup_codes (
    user_id    text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash  bytea       NOT NULL,
    used_at    timestamptz NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, code_hash)
);

-- The pending second factor of a password sign-in, by the hash of its id.
CREATE TABLE mfa_challenges (
    id_hash        bytea       NOT NULL PRIMARY KEY,
    user_id        text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at     timestamptz NOT NULL,
    attempts       integer     NOT NULL DEFAULT 0,
    max_attempts   integer     NOT NULL CHECK (max_attempts > 0),
    remember_me    boolean     NOT NULL DEFAULT false,
    consumed_at    timestamptz NULL,
    otp_hash       bytea       NULL,
    otp_expires_at timestamptz NULL
);
CREATE INDEX mfa_challenges_user_id_idx ON mfa_challenges (user_id);
CREATE INDEX mfa_challenges_expires_at_idx ON mfa_challenges (expires_at);

-- Passkeys (WebAuthn credentials), by credential id. public_key is COSE;
-- transports is a JSON array of strings.
CREATE TABLE passkeys (
    id               bytea       NOT NULL PRIMARY KEY,
    user_id          text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name             text        NOT NULL DEFAULT '',
    public_key       bytea       NOT NULL CHECK (length(public_key) > 0),
    sign_count       bigint      NOT NULL DEFAULT 0 CHECK (sign_count BETWEEN 0 AND 4294967295),
    aaguid           bytea       NULL,
    transports       jsonb       NOT NULL CHECK (jsonb_typeof(transports) = 'array'),
    backup_eligible  boolean     NOT NULL DEFAULT false,
    backed_up        boolean     NOT NULL DEFAULT false,
    attestation_type text        NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    last_used_at     timestamptz NULL
);
-- A user's passkeys, newest first.
CREATE INDEX passkeys_user_id_created_at_idx ON passkeys (user_id, created_at);

-- Pending WebAuthn ceremonies, by the hash of their id; user_id is NULL for
-- a discoverable sign-in. session_data is opaque to the store.
CREATE TABLE webauthn_challenges (
    id_hash      bytea       NOT NULL PRIMARY KEY,
    challenge    bytea       NOT NULL,
    user_id      text        NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose      text        NOT NULL CHECK (purpose IN ('registration', 'authentication')),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz NULL,
    session_data bytea       NULL
);
CREATE INDEX webauthn_challenges_user_id_idx ON webauthn_challenges (user_id);
CREATE INDEX webauthn_challenges_expires_at_idx ON webauthn_challenges (expires_at);

-- +goose Down
DROP TABLE webauthn_challenges;
DROP TABLE passkeys;
DROP TABLE mfa_challenges;
DROP TABLE backup_codes;
DROP TABLE totp_factors;
