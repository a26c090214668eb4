-- +goose Up
-- Metadata that trusted backends keep on a user: JSON objects, public (a
-- backend may show it to the user) and private (backends only), at most
-- 8 KiB each (checked by the application). A constant default lets
-- PostgreSQL add the columns without rewriting the table.
--
-- The trusted user listing pages newest first, ORDER BY created_at DESC,
-- id COLLATE "C" DESC from a (created_at, id) cursor: users_created_at_idx
-- of 00004, on (created_at, id COLLATE "C"), serves it read backwards, and
-- the unique users_email_key serves the lookup by address. No new index is
-- needed.
ALTER TABLE users
    ADD COLUMN public_metadata  jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(public_metadata) = 'object'),
    ADD COLUMN private_metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(private_metadata) = 'object');

-- +goose Down
ALTER TABLE users
    DROP COLUMN private_metadata,
    DROP COLUMN public_metadata;
