-- +goose Up
-- The transactional outbox: a message is written in the same transaction
-- as the change it reports (a domain event for the webhooks) or asks for (a
-- mail, sealed), and deleted once delivered. Relays claim a topic's due
-- messages, oldest first, each in one statement (FOR UPDATE SKIP LOCKED, so
-- concurrent claimers never take the same one); a claim moves available_at
-- to the end of its lease, a failure to the next retry, and a claimer that
-- dies leaves the message to be claimed again when its lease ends.
CREATE TABLE outbox_messages (
    id           text        NOT NULL PRIMARY KEY,
    topic        text        NOT NULL CHECK (topic <> ''),
    type         text        NOT NULL,
    payload      bytea       NOT NULL,
    created_at   timestamptz NOT NULL,
    available_at timestamptz NOT NULL,
    attempts     integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error   text        NOT NULL DEFAULT ''
);
-- The claim: a topic's due messages in the order of availability, ties
-- broken by id in byte order (the order every store uses).
CREATE INDEX outbox_messages_topic_available_at_idx ON outbox_messages (topic, available_at, id COLLATE "C");

-- +goose Down
DROP TABLE outbox_messages;
