-- +goose Up
-- The trusted API lists every organization newest first (created_at, then id
-- in byte order, both descending) and pages by keyset from the last one seen:
-- this index serves each page in order, read backwards, from the cursor's
-- position, so every page costs the same however many organizations there
-- are. id is indexed in the "C" collation that the listing's ORDER BY and
-- cursor condition name, so ties sort as every store sorts them.
CREATE INDEX organizations_created_at_idx ON organizations (created_at, id COLLATE "C");

-- +goose Down
DROP INDEX organizations_created_at_idx;
