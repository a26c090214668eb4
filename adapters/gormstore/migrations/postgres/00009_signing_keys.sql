-- +goose Up
-- The key pairs tokens are signed with. public_jwk is the public key as a
-- JSON Web Key (kid, alg, use and public members only), kept as the text
-- that was written; sealed_private is the private key encrypted
-- (XChaCha20-Poly1305 under a key derived from the service secret, bound to
-- id and alg), never the key in the clear. retired_at is NULL while the key
-- signs; a retired key stays published until every token it signed has
-- expired, then is deleted. The keys are few and read all at once, so no
-- index beyond the primary key.
CREATE TABLE signing_keys (
    id             text        NOT NULL PRIMARY KEY,
    alg            text        NOT NULL CHECK (alg IN ('EdDSA', 'RS256')),
    public_jwk     text        NOT NULL CHECK (jsonb_typeof(public_jwk::jsonb) = 'object'),
    sealed_private bytea       NOT NULL CHECK (length(sealed_private) > 0),
    created_at     timestamptz NOT NULL,
    retired_at     timestamptz NULL
);

-- +goose Down
DROP TABLE signing_keys;
