-- +goose Up
-- The transactional outbox: a message is written in the same transaction
-- as the change it reports (a domain event for the webhooks) or asks for (a
-- mail, sealed), and deleted once delivered. Relays claim a topic's due
-- messages, oldest first, in an immediate transaction (the write lock keeps
-- claimers apart); a claim moves available_at to the end of its lease, a
-- failure to the next retry, and a claimer that dies leaves the message to
-- be claimed again when its lease ends.
CREATE TABLE outbox_messages (
    id           TEXT     NOT NULL PRIMARY KEY,
    topic        TEXT     NOT NULL CHECK (topic <> ''),
    type         TEXT     NOT NULL,
    payload      BLOB     NOT NULL,
    created_at   DATETIME NOT NULL,
    available_at DATETIME NOT NULL,
    attempts     INTEGER  NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error   TEXT     NOT NULL DEFAULT ''
);
-- The claim: a topic's due messages in the order of availability, ties
-- broken by id.
CREATE INDEX outbox_messages_topic_available_at_idx ON outbox_messages (topic, available_at, id);

-- +goose Down
DROP TABLE outbox_messages;
