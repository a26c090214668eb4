-- +goose Up
-- Organizations, their members and invitations (Better Auth's organization
-- plugin). Roles are stored comma-separated, as Better Auth stores them.
-- member_count is how many members an organization has, kept by the
-- triggers on members below: counting them would cost in proportion to
-- their number.
CREATE TABLE organizations (
    id         text        NOT NULL PRIMARY KEY,
    name       text        NOT NULL,
    slug       text        NOT NULL,
    logo       text        NOT NULL DEFAULT '',
    metadata   text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    member_count integer   NOT NULL DEFAULT 0
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
-- Pages of an organization's members, in joining order either way, ties
-- broken by id in byte order (the order every store uses), so id is indexed
-- in the "C" collation that the page's ORDER BY and cursor condition name.
CREATE INDEX members_organization_id_created_at_idx ON members (organization_id, created_at, id COLLATE "C");
CREATE INDEX members_user_id_idx ON members (user_id);

-- organizations.member_count follows every insert and delete of a member,
-- those of ON DELETE CASCADE included, in the statement's transaction: one
-- update per statement and organization, from the statement's transition
-- table. The organizations are locked in id order first, so that two
-- statements touching the same organizations (deleting two users who share
-- them) take the locks in one order and cannot deadlock. A membership that
-- moves to another organization is counted out of one and into the other.
-- A bulk load should add an organization's members in few statements
-- (INSERT … SELECT updates the count once) or in short transactions: one
-- long transaction adding them one statement at a time updates the row each
-- time, and as PostgreSQL cannot prune the versions of a row that an open
-- transaction left, each update walks all those before it.
-- +goose StatementBegin
CREATE FUNCTION members_count() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    delta integer := CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END;
BEGIN
    PERFORM 1 FROM organizations
        WHERE id IN (SELECT organization_id FROM changed)
        ORDER BY id FOR NO KEY UPDATE;
    UPDATE organizations o SET member_count = o.member_count + delta * c.n
        FROM (SELECT organization_id, count(*) AS n FROM changed GROUP BY organization_id) c
        WHERE o.id = c.organization_id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER members_count_insert AFTER INSERT ON members
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION members_count();
CREATE TRIGGER members_count_delete AFTER DELETE ON members
    REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION members_count();

-- +goose StatementBegin
CREATE FUNCTION members_count_move() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE organizations SET member_count = member_count - 1 WHERE id = OLD.organization_id;
    UPDATE organizations SET member_count = member_count + 1 WHERE id = NEW.organization_id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER members_count_move AFTER UPDATE OF organization_id ON members
    FOR EACH ROW WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id)
    EXECUTE FUNCTION members_count_move();

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
DROP FUNCTION members_count_move();
DROP FUNCTION members_count();
DROP TABLE organizations;
