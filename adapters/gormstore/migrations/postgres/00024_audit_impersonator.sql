-- +goose Up
-- The administrator behind an impersonation session an audited action came
-- through ('' when there was none): the entry names both them and the user.
-- Adding a column with a constant default rewrites no row and fires no
-- UPDATE trigger, so the log stays append-only.
ALTER TABLE audit_log ADD COLUMN impersonator_id text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE audit_log DROP COLUMN impersonator_id;
