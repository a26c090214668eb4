-- +goose Up
-- The count of wrong second-factor answers of a user without a password
-- (a user with one counts them on credentials), locking their second
-- factor as wrong passwords lock a password: shared by every replica.
CREATE TABLE factor_lockouts (
    user_id         TEXT     NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    failed_attempts INTEGER  NOT NULL DEFAULT 0,
    locked_until    DATETIME NULL,
    updated_at      DATETIME NOT NULL
);

-- +goose Down
DROP TABLE factor_lockouts;
