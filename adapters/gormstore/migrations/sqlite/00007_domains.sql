-- +goose Up
-- Domains that an organization (or, with organization_id NULL, the service)
-- claims and proves by publishing DNS records. hostname is normalised
-- (lower case, punycode, no trailing dot) and unique in the service,
-- whatever the organization. records is the JSON array of the records to
-- publish with what the last check observed of each. next_check_at is NULL
-- when no check is scheduled (a failed domain, or one verified by hand).
CREATE TABLE domains (
    id              TEXT     NOT NULL PRIMARY KEY,
    hostname        TEXT     NOT NULL CHECK (hostname = lower(hostname) AND hostname <> ''),
    organization_id TEXT     NULL REFERENCES organizations (id) ON DELETE CASCADE,
    status          TEXT     NOT NULL CHECK (status IN ('pending', 'verified', 'failed')),
    token           TEXT     NOT NULL,
    records         TEXT     NOT NULL CHECK (json_valid(records) AND json_type(records) = 'array'),
    attempts        INTEGER  NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_checked_at DATETIME NULL,
    next_check_at   DATETIME NULL,
    window_start    DATETIME NOT NULL,
    missing_since   DATETIME NULL,
    verified_at     DATETIME NULL,
    failed_at       DATETIME NULL,
    manual_reason   TEXT     NOT NULL DEFAULT '',
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL
);
CREATE UNIQUE INDEX domains_hostname_key ON domains (hostname);
-- Pages newest first, ties broken by id. The organization's index also
-- serves the foreign key's ON DELETE CASCADE, and the status index the
-- status filter.
CREATE INDEX domains_created_at_idx ON domains (created_at, id);
CREATE INDEX domains_organization_id_created_at_idx ON domains (organization_id, created_at, id);
CREATE INDEX domains_status_created_at_idx ON domains (status, created_at, id);
-- The verifier's queue: the domains due for a check, most overdue first.
-- Only scheduled domains are in it.
CREATE INDEX domains_next_check_at_idx ON domains (next_check_at, id) WHERE next_check_at IS NOT NULL;

-- +goose Down
DROP TABLE domains;
