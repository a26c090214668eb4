-- +goose Up
-- Webhooks: the endpoints trusted backends register, the event messages
-- the outbox's relay hands them, one delivery per message and endpoint,
-- and every attempt of a delivery.

-- The endpoints of the deployment. event_types is a JSON array of event
-- types ([] for every event). The signing secrets are kept only sealed
-- (encrypted under keys derived from the service secrets); the previous
-- one signs too until previous_secret_expires_at. The list is read in
-- creation order: the table is small.
CREATE TABLE webhook_endpoints (
    id                         text        NOT NULL PRIMARY KEY,
    url                        text        NOT NULL CHECK (url <> ''),
    description                text        NOT NULL DEFAULT '',
    event_types                jsonb       NOT NULL CHECK (jsonb_typeof(event_types) = 'array'),
    enabled                    boolean     NOT NULL,
    disabled_reason            text        NOT NULL DEFAULT '',
    disabled_at                timestamptz NULL,
    sealed_secret              bytea       NOT NULL CHECK (length(sealed_secret) > 0),
    sealed_previous_secret     bytea       NULL,
    previous_secret_expires_at timestamptz NULL,
    last_success_at            timestamptz NULL,
    failing_since              timestamptz NULL,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL
);

-- The events, each kept once whatever the number of endpoints: payload is
-- the body every delivery sends. Purged after the retention period
-- (webhook_messages_created_at_idx), which also serves a replay since a
-- time.
CREATE TABLE webhook_messages (
    id         text        NOT NULL PRIMARY KEY,
    type       text        NOT NULL CHECK (type <> ''),
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX webhook_messages_created_at_idx ON webhook_messages (created_at);

-- One message for one endpoint. created_at is the message's, copied so an
-- endpoint's deliveries page by it through an index. next_attempt_at is
-- when a pending delivery is due (while claimed, the end of the claim);
-- NULL once finished. last_attempt_id names the latest attempt.
CREATE TABLE webhook_deliveries (
    endpoint_id     text        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    message_id      text        NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
    status          text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NULL,
    created_at      timestamptz NOT NULL,
    last_attempt_id text        NULL,
    PRIMARY KEY (endpoint_id, message_id),
    CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
-- The senders' claim: only pending deliveries, the longest due first.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- An endpoint's deliveries, newest first, ties broken by message id in
-- byte order (the order every store uses), with or without a status.
CREATE INDEX webhook_deliveries_endpoint_created_idx ON webhook_deliveries (endpoint_id, created_at, message_id COLLATE "C");
CREATE INDEX webhook_deliveries_endpoint_status_idx ON webhook_deliveries (endpoint_id, status, created_at, message_id COLLATE "C");
-- The message's ON DELETE CASCADE (the purge).
CREATE INDEX webhook_deliveries_message_id_idx ON webhook_deliveries (message_id);

-- The attempts of a delivery, oldest first. response is the start of the
-- response body (at most 1 KiB, printable); error says why no response
-- came.
CREATE TABLE webhook_attempts (
    id           text        NOT NULL PRIMARY KEY,
    endpoint_id  text        NOT NULL,
    message_id   text        NOT NULL,
    attempted_at timestamptz NOT NULL,
    status_code  integer     NOT NULL DEFAULT 0,
    error        text        NOT NULL DEFAULT '',
    latency_ms   integer     NOT NULL DEFAULT 0 CHECK (latency_ms >= 0),
    response     text        NOT NULL DEFAULT '',
    FOREIGN KEY (endpoint_id, message_id) REFERENCES webhook_deliveries (endpoint_id, message_id) ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (endpoint_id, message_id, attempted_at);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_messages;
DROP TABLE webhook_endpoints;
