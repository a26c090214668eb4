-- +goose Up
-- Organizations, their members and invitations (Better Auth's organization
-- plugin). Roles are stored comma-separated, as Better Auth stores them.
CREATE TABLE organizations (
    id         TEXT     NOT NULL PRIMARY KEY,
    name       TEXT     NOT NULL,
    slug       TEXT     NOT NULL,
    logo       TEXT     NOT NULL DEFAULT '',
    metadata   TEXT     NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX organizations_slug_key ON organizations (slug);

CREATE TABLE members (
    id              TEXT     NOT NULL PRIMARY KEY,
    organization_id TEXT     NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         TEXT     NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role            TEXT     NOT NULL,
    created_at      DATETIME NOT NULL
);
CREATE UNIQUE INDEX members_organization_id_user_id_key ON members (organization_id, user_id);
-- Pages of an organization's members, in joining order either way.
CREATE INDEX members_organization_id_created_at_idx ON members (organization_id, created_at, id);
CREATE INDEX members_user_id_idx ON members (user_id);

-- inviter_id is NULL once the inviting user is deleted: the invitation stays.
CREATE TABLE invitations (
    id              TEXT     NOT NULL PRIMARY KEY,
    organization_id TEXT     NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email           TEXT     NOT NULL CHECK (email = lower(email)),
    role            TEXT     NOT NULL,
    status          TEXT     NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected', 'canceled')),
    inviter_id      TEXT     NULL REFERENCES users (id) ON DELETE SET NULL,
    expires_at      DATETIME NOT NULL,
    created_at      DATETIME NOT NULL,
    updated_at      DATETIME NOT NULL
);
CREATE INDEX invitations_organization_id_created_at_idx ON invitations (organization_id, created_at);
CREATE INDEX invitations_email_status_idx ON invitations (email, status);
CREATE INDEX invitations_inviter_id_idx ON invitations (inviter_id);

-- +goose Down
DROP TABLE invitations;
DROP TABLE members;
DROP TABLE organizations;
