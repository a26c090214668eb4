-- +goose Up
-- Organizations, their members and invitations (Better Auth's organization
-- plugin). Roles are stored comma-separated, as Better Auth stores them.
-- member_count is how many members an organization has, kept by the
-- triggers on members below: counting them would cost in proportion to
-- their number.
CREATE TABLE organizations (
    id         TEXT     NOT NULL PRIMARY KEY,
    name       TEXT     NOT NULL,
    slug       TEXT     NOT NULL,
    logo       TEXT     NOT NULL DEFAULT '',
    metadata   TEXT     NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    member_count INTEGER NOT NULL DEFAULT 0
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

-- organizations.member_count follows every insert and delete of a member,
-- those of ON DELETE CASCADE included (SQLite fires triggers for foreign-key
-- actions), in the statement's transaction. A membership that moves to
-- another organization is counted out of one and into the other.
-- +goose StatementBegin
CREATE TRIGGER members_count_insert AFTER INSERT ON members
BEGIN
    UPDATE organizations SET member_count = member_count + 1 WHERE id = NEW.organization_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER members_count_delete AFTER DELETE ON members
BEGIN
    UPDATE organizations SET member_count = member_count - 1 WHERE id = OLD.organization_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER members_count_move AFTER UPDATE OF organization_id ON members
WHEN NEW.organization_id <> OLD.organization_id
BEGIN
    UPDATE organizations SET member_count = member_count - 1 WHERE id = OLD.organization_id;
    UPDATE organizations SET member_count = member_count + 1 WHERE id = NEW.organization_id;
END;
-- +goose StatementEnd

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
