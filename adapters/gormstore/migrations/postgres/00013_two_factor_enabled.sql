-- +goose Up
-- Whether sign-in asks the user for a second factor: set by the first
-- accepted TOTP code, cleared by disabling two-factor (Better Auth's
-- user.twoFactorEnabled). A constant default lets PostgreSQL add the column
-- without rewriting the table.
ALTER TABLE users ADD COLUMN two_factor_enabled boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE users DROP COLUMN two_factor_enabled;
