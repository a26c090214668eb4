-- +goose Up
-- The key pairs tokens are signed with. public_jwk is the public key as a
-- JSON Web Key (kid, alg, use and public members only); sealed_private is
-- the private key encrypted (XChaCha20-Poly1305 under a key derived from
-- the service secret, bound to id and alg), never the key in the clear.
-- retired_at is NULL while the key signs; a retired key stays published
-- until every token it signed has expired, then is deleted. The keys are
-- few and read all at once, so no index beyond the primary key.
CREATE TABLE signing_keys (
    id             TEXT     NOT NULL PRIMARY KEY,
    alg            TEXT     NOT NULL CHECK (alg IN ('EdDSA', 'RS256')),
    public_jwk     TEXT     NOT NULL CHECK (json_valid(public_jwk) AND json_type(public_jwk) = 'object'),
    sealed_private BLOB     NOT NULL CHECK (length(sealed_private) > 0),
    created_at     DATETIME NOT NULL,
    retired_at     DATETIME NULL
);

-- +goose Down
DROP TABLE signing_keys;
