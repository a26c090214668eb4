-- +goose Up
CREATE TABLE users (
    id             TEXT     NOT NULL PRIMARY KEY,
    name           TEXT     NOT NULL,
    email          TEXT     NOT NULL CHECK (email = lower(email)),
    email_verified BOOLEAN  NOT NULL DEFAULT FALSE,
    image          TEXT     NOT NULL DEFAULT '',
    created_at     DATETIME NOT NULL,
    updated_at     DATETIME NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (email);

-- +goose Down
DROP TABLE users;
