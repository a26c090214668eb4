-- +goose Up
-- Domains that an organization (or, with organization_id NULL, the service)
-- claims and proves by publishing DNS records. hostname is normalised
-- (lower case, punycode, no trailing dot) and unique in the service,
-- whatever the organization. records is the JSON array of the records to
-- publish with what the last check observed of each. next_check_at is NULL
-- when no check is scheduled (a failed domain, or one verified by hand).
CREATE TABLE domains (
    id              text        NOT NULL PRIMARY KEY,
    hostname        text        NOT NULL CHECK (hostname = lower(hostname) AND hostname <> ''),
    organization_id text        NULL REFERENCES organizations (id) ON DELETE CASCADE,
    status          text        NOT NULL CHECK (status IN ('pending', 'verified', 'failed')),
    token           text        NOT NULL,
    records         jsonb       NOT NULL CHECK (jsonb_typeof(records) = 'array'),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_checked_at timestamptz NULL,
    next_check_at   timestamptz NULL,
    window_start    timestamptz NOT NULL,
    missing_since   timestamptz NULL,
    verified_at     timestamptz NULL,
    failed_at       timestamptz NULL,
    manual_reason   text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX domains_hostname_key ON domains (hostname);
-- Pages newest first, ties broken by id in byte order (the order every
-- store uses), so id is indexed in the "C" collation that the page's ORDER
-- BY and cursor condition name. The organization's index also serves the
-- foreign key's ON DELETE CASCADE, and the status index the status filter.
CREATE INDEX domains_created_at_idx ON domains (created_at, id COLLATE "C");
CREATE INDEX domains_organization_id_created_at_idx ON domains (organization_id, created_at, id COLLATE "C");
CREATE INDEX domains_status_created_at_idx ON domains (status, created_at, id COLLATE "C");
-- The verifier's queue: the domains due for a check, most overdue first.
-- Only scheduled domains are in it.
CREATE INDEX domains_next_check_at_idx ON domains (next_check_at, id COLLATE "C") WHERE next_check_at IS NOT NULL;

-- +goose Down
DROP TABLE domains;
