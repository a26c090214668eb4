-- +goose Up
-- Whether sign-in asks the user for a second factor: set by the first
-- accepted TOTP code, cleared by disabling two-factor (Better Auth's
-- user.twoFactorEnabled).
ALTER TABLE users ADD COLUMN two_factor_enabled BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE users DROP COLUMN two_factor_enabled;
