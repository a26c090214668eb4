-- +goose Up
-- Multi-factor authentication. Secrets, codes and challenge ids are kept
-- only sealed or hashed: sealed_secret is the TOTP secret encrypted under a
-- key derived from the service secret; code_hash, id_hash and otp_hash are
-- SHA-256 digests. Every row belongs to a user and goes with them.

-- A user's TOTP factor (at most one). last_used_step is the RFC 6238 time
-- step of the last accepted code: a code of that step or an earlier one is a
-- replay, refused by a conditional UPDATE.
CREATE TABLE totp_factors (
    user_id        TEXT     NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    sealed_secret  BLOB     NOT NULL CHECK (length(sealed_secret) > 0),
    verified       BOOLEAN  NOT NULL DEFAULT FALSE,
    last_used_step INTEGER  NOT NULL DEFAULT 0,
    created_at     DATETIME NOT NULL,
    verified_at    DATETIME NULL
);

-- Single-use backup codes; used_at is NULL while unused.
CREATE TABLE backup_codes (
    user_id    TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash  BLOB     NOT NULL,
    used_at    DATETIME NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (user_id, code_hash)
);

-- The pending second factor of a password sign-in, by the hash of its id.
CREATE TABLE mfa_challenges (
    id_hash        BLOB     NOT NULL PRIMARY KEY,
    user_id        TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at     DATETIME NOT NULL,
    attempts       INTEGER  NOT NULL DEFAULT 0,
    max_attempts   INTEGER  NOT NULL CHECK (max_attempts > 0),
    remember_me    BOOLEAN  NOT NULL DEFAULT FALSE,
    consumed_at    DATETIME NULL,
    otp_hash       BLOB     NULL,
    otp_expires_at DATETIME NULL
);
CREATE INDEX mfa_challenges_user_id_idx ON mfa_challenges (user_id);
CREATE INDEX mfa_challenges_expires_at_idx ON mfa_challenges (expires_at);

-- Passkeys (WebAuthn credentials), by credential id. public_key is COSE;
-- transports is a JSON array of strings.
CREATE TABLE passkeys (
    id               BLOB     NOT NULL PRIMARY KEY,
    user_id          TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name             TEXT     NOT NULL DEFAULT '',
    public_key       BLOB     NOT NULL CHECK (length(public_key) > 0),
    sign_count       INTEGER  NOT NULL DEFAULT 0 CHECK (sign_count BETWEEN 0 AND 4294967295),
    aaguid           BLOB     NULL,
    transports       TEXT     NOT NULL CHECK (json_valid(transports) AND json_type(transports) = 'array'),
    backup_eligible  BOOLEAN  NOT NULL DEFAULT FALSE,
    backed_up        BOOLEAN  NOT NULL DEFAULT FALSE,
    attestation_type TEXT     NOT NULL DEFAULT '',
    created_at       DATETIME NOT NULL,
    last_used_at     DATETIME NULL
);
-- A user's passkeys, newest first.
CREATE INDEX passkeys_user_id_created_at_idx ON passkeys (user_id, created_at);

-- Pending WebAuthn ceremonies, by the hash of their id; user_id is NULL for
-- a discoverable sign-in. session_data is opaque to the store.
CREATE TABLE webauthn_challenges (
    id_hash      BLOB     NOT NULL PRIMARY KEY,
    challenge    BLOB     NOT NULL,
    user_id      TEXT     NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose      TEXT     NOT NULL CHECK (purpose IN ('registration', 'authentication')),
    expires_at   DATETIME NOT NULL,
    used_at      DATETIME NULL,
    session_data BLOB     NULL
);
CREATE INDEX webauthn_challenges_user_id_idx ON webauthn_challenges (user_id);
CREATE INDEX webauthn_challenges_expires_at_idx ON webauthn_challenges (expires_at);

-- +goose Down
DROP TABLE webauthn_challenges;
DROP TABLE passkeys;
DROP TABLE mfa_challenges;
DROP TABLE backup_codes;
DROP TABLE totp_factors;
