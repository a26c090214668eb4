-- +goose Up
-- activates_at is when a key starts signing. A rotation publishes the new
-- key at once but signs with it only after every instance has reloaded the
-- key set (it would otherwise sign tokens that other instances' key sets
-- lack); the key it replaces gets retired_at = the new key's activates_at,
-- possibly in the future. Keys made before this column signed at once.
ALTER TABLE signing_keys ADD COLUMN activates_at DATETIME NULL;
UPDATE signing_keys SET activates_at = created_at;

-- +goose Down
ALTER TABLE signing_keys DROP COLUMN activates_at;
