-- +goose Up
-- Whether the organization's members must have a second factor (two-factor
-- or a passkey) to act in it. A constant default lets PostgreSQL add the
-- column without rewriting the table.
ALTER TABLE organizations ADD COLUMN require_two_factor BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE organizations DROP COLUMN require_two_factor;
