-- +goose Up
-- How the user signed in, carried from the session through the code to the
-- grant for the ID token's amr and acr claims (and refreshed ID tokens).
-- Codes and grants before this came from password sign-ins.
ALTER TABLE oauth_codes ADD COLUMN auth_methods TEXT NOT NULL DEFAULT 'pwd';
ALTER TABLE oauth_codes ADD COLUMN acr TEXT NOT NULL DEFAULT 'urn:gatehouse:acr:pwd';
ALTER TABLE oauth_grants ADD COLUMN auth_methods TEXT NOT NULL DEFAULT 'pwd';
ALTER TABLE oauth_grants ADD COLUMN acr TEXT NOT NULL DEFAULT 'urn:gatehouse:acr:pwd';

-- +goose Down
ALTER TABLE oauth_grants DROP COLUMN acr;
ALTER TABLE oauth_grants DROP COLUMN auth_methods;
ALTER TABLE oauth_codes DROP COLUMN acr;
ALTER TABLE oauth_codes DROP COLUMN auth_methods;
