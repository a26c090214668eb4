-- +goose Up
-- Organizations, their members and invitations (Better Auth's organization
-- plugin). Roles are stored comma-separated, as Better Auth stores them.
CREATE TABLE organizations (
    id         text        NOT NULL PRIMARY KEY,
    name       text        NOT NULL,
    slug       text        NOT NULL,
    logo       text        NOT NULL DEFAULT '',
    metadata   text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX organizations_slug_key ON organizations (slug);

CREATE TABLE members (
    id              text        NOT NULL PRIMARY KEY,
    organization_id text        NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role            text        NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX members_organization_id_user_id_key ON members (organization_id, user_id);
-- Pages of an organization's members, in joining order either way.
CREATE INDEX members_organization_id_created_at_idx ON members (organization_id, created_at, id);
CREATE INDEX members_user_id_idx ON members (user_id);

-- inviter_id is NULL once the inviting user is deleted: the invitation stays.
CREATE TABLE invitations (
    id              text        NOT NULL PRIMARY KEY,
    organization_id text        NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email           text        NOT NULL CHECK (email = lower(email)),
    role            text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected', 'canceled')),
    inviter_id      text        NULL REFERENCES users (id) ON DELETE SET NULL,
    expires_at      timestamptz NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX invitations_organization_id_created_at_idx ON invitations (organization_id, created_at);
CREATE INDEX invitations_email_status_idx ON invitations (email, status);
CREATE INDEX invitations_inviter_id_idx ON invitations (inviter_id);

-- +goose Down
DROP TABLE invitations;
DROP TABLE members;
DROP TABLE organizations;
