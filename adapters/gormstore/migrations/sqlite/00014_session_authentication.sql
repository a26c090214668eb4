-- +goose Up
-- How the user proved who they are in each session: the RFC 8176 methods
-- (space-separated; sessions before this were password sign-ins) and when a
-- second factor or a passkey was last proven, for step-up and the amr and
-- acr claims.
ALTER TABLE sessions ADD COLUMN auth_methods TEXT NOT NULL DEFAULT 'pwd';
ALTER TABLE sessions ADD COLUMN second_factor_at DATETIME NULL;

-- +goose Down
ALTER TABLE sessions DROP COLUMN second_factor_at;
ALTER TABLE sessions DROP COLUMN auth_methods;
