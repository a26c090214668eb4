-- +goose Up
-- Metadata that trusted backends keep on a user: JSON objects, public (a
-- backend may show it to the user) and private (backends only), at most
-- 8 KiB each (checked by the application).
--
-- The trusted user listing pages newest first, ORDER BY created_at DESC,
-- id DESC from a (created_at, id) cursor: users_created_at_idx of 00004
-- serves it read backwards, and the unique users_email_key serves the
-- lookup by address. No new index is needed.
ALTER TABLE users ADD COLUMN public_metadata  TEXT NOT NULL DEFAULT '{}' CHECK (json_type(public_metadata) = 'object');
ALTER TABLE users ADD COLUMN private_metadata TEXT NOT NULL DEFAULT '{}' CHECK (json_type(private_metadata) = 'object');

-- +goose Down
ALTER TABLE users DROP COLUMN private_metadata;
ALTER TABLE users DROP COLUMN public_metadata;
