-- +goose Up
CREATE TABLE users (
    id             text        NOT NULL PRIMARY KEY,
    name           text        NOT NULL,
    email          text        NOT NULL CHECK (email = lower(email)),
    email_verified boolean     NOT NULL DEFAULT false,
    image          text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (email);

-- +goose Down
DROP TABLE users;
