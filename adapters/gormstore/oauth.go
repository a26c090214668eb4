package gormstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var (
	_ ports.OAuthClientRepository = (*OAuthClientRepository)(nil)
	_ ports.OAuthGrantRepository  = (*OAuthGrantRepository)(nil)
)

// OAuthClientRepository stores OAuth clients in oauth_clients. Deleting a
// client deletes its codes, grants (with their refresh tokens) and consents
// by the foreign keys' ON DELETE CASCADE.
type OAuthClientRepository struct {
	db *gorm.DB
	// idOrder is the id column as the list sorts it: on PostgreSQL in the
	// "C" collation, byte by byte as SQLite and the memory store compare it.
	idOrder string
}

// NewOAuthClientRepository returns an OAuthClientRepository on db.
func NewOAuthClientRepository(db *gorm.DB) *OAuthClientRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	id := "id"
	if DialectOf(db) == DialectPostgres {
		id = `id COLLATE "C"`
	}
	return &OAuthClientRepository{db: db, idOrder: id}
}

// OAuthGrantRepository stores authorization codes (oauth_codes), grants
// (oauth_grants), refresh tokens (oauth_refresh_tokens) and consents
// (oauth_consents). Deleting a user or a client deletes theirs by the
// foreign keys' ON DELETE CASCADE.
type OAuthGrantRepository struct {
	db *gorm.DB
}

// NewOAuthGrantRepository returns an OAuthGrantRepository on db.
func NewOAuthGrantRepository(db *gorm.DB) *OAuthGrantRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &OAuthGrantRepository{db: db}
}

var (
	// errOAuthOwnerNotFound is a foreign-key violation of a code, grant or
	// consent: its client or its user does not exist.
	errOAuthOwnerNotFound = domain.NotFound("oauth.owner_not_found", "client or user")
)

type oauthClientRow struct {
	ID                     string     `gorm:"column:id;primaryKey;type:text;index:oauth_clients_created_at_idx,priority:2"`
	Name                   string     `gorm:"column:name;not null"`
	Type                   string     `gorm:"column:type;not null"`
	RedirectURIs           stringList `gorm:"column:redirect_uris;not null"`
	PostLogoutRedirectURIs stringList `gorm:"column:post_logout_redirect_uris;not null"`
	FirstParty             bool       `gorm:"column:first_party;not null"`
	SecretHash             string     `gorm:"column:secret_hash;not null"`
	SecretLast4            string     `gorm:"column:secret_last4;not null"`
	CreatedAt              time.Time  `gorm:"column:created_at;not null;autoCreateTime:false;index:oauth_clients_created_at_idx,priority:1"`
	UpdatedAt              time.Time  `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (oauthClientRow) TableName() string { return "oauth_clients" }

type oauthCodeRow struct {
	Hash                string     `gorm:"column:hash;primaryKey;type:text"`
	ClientID            string     `gorm:"column:client_id;not null;index:oauth_codes_client_id_idx"`
	UserID              string     `gorm:"column:user_id;not null;index:oauth_codes_user_id_idx"`
	RedirectURI         string     `gorm:"column:redirect_uri;not null"`
	Scopes              string     `gorm:"column:scopes;not null"` // separated by spaces
	Nonce               string     `gorm:"column:nonce;not null"`
	CodeChallenge       string     `gorm:"column:code_challenge;not null"`
	CodeChallengeMethod string     `gorm:"column:code_challenge_method;not null"`
	AuthTime            *time.Time `gorm:"column:auth_time"`
	AuthMethods         string     `gorm:"column:auth_methods;not null"` // separated by spaces
	ACR                 string     `gorm:"column:acr;not null"`
	CreatedAt           time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
	ExpiresAt           time.Time  `gorm:"column:expires_at;not null;index:oauth_codes_expires_at_idx"`
	ConsumedAt          *time.Time `gorm:"column:consumed_at"`
	GrantID             string     `gorm:"column:grant_id;not null"`
}

func (oauthCodeRow) TableName() string { return "oauth_codes" }

type oauthGrantRow struct {
	ID       string `gorm:"column:id;primaryKey;type:text"`
	ClientID string `gorm:"column:client_id;not null;index:oauth_grants_client_id_idx"`
	// UserID is NULL for client credentials.
	UserID      *string    `gorm:"column:user_id;index:oauth_grants_user_id_idx"`
	Scopes      string     `gorm:"column:scopes;not null"`
	AuthTime    *time.Time `gorm:"column:auth_time"`
	AuthMethods string     `gorm:"column:auth_methods;not null"` // separated by spaces
	ACR         string     `gorm:"column:acr;not null"`
	Nonce       string     `gorm:"column:nonce;not null"`
	CreatedAt   time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
	ExpiresAt   time.Time  `gorm:"column:expires_at;not null;index:oauth_grants_expires_at_idx"`
	RevokedAt   *time.Time `gorm:"column:revoked_at"`
}

func (oauthGrantRow) TableName() string { return "oauth_grants" }

type oauthRefreshRow struct {
	Hash      string     `gorm:"column:hash;primaryKey;type:text"`
	GrantID   string     `gorm:"column:grant_id;not null;index:oauth_refresh_tokens_grant_id_idx"`
	CreatedAt time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
	ExpiresAt time.Time  `gorm:"column:expires_at;not null;index:oauth_refresh_tokens_expires_at_idx"`
	UsedAt    *time.Time `gorm:"column:used_at"`
}

func (oauthRefreshRow) TableName() string { return "oauth_refresh_tokens" }

type oauthConsentRow struct {
	UserID    string    `gorm:"column:user_id;primaryKey;type:text"`
	ClientID  string    `gorm:"column:client_id;primaryKey;type:text;index:oauth_consents_client_id_idx"`
	Scopes    string    `gorm:"column:scopes;not null"`
	CreatedAt time.Time `gorm:"column:created_at;not null;autoCreateTime:false"`
	UpdatedAt time.Time `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (oauthConsentRow) TableName() string { return "oauth_consents" }

// oauthRefreshLookupRow is one row of the refresh-token lookup, which reads
// the token and its grant in one query; the prefixes keep the two tables'
// columns apart.
type oauthRefreshLookupRow struct {
	Token oauthRefreshRow `gorm:"embedded;embeddedPrefix:r_"`
	Grant oauthGrantRow   `gorm:"embedded;embeddedPrefix:g_"`
}

// oauthRefreshLookupSQL reaches the token by the primary key of
// oauth_refresh_tokens and its grant by the primary key of oauth_grants.
const oauthRefreshLookupSQL = `SELECT
 r.hash AS r_hash, r.grant_id AS r_grant_id, r.created_at AS r_created_at, r.expires_at AS r_expires_at, r.used_at AS r_used_at,
 g.id AS g_id, g.client_id AS g_client_id, g.user_id AS g_user_id, g.scopes AS g_scopes, g.auth_time AS g_auth_time,
 g.auth_methods AS g_auth_methods, g.acr AS g_acr, g.nonce AS g_nonce, g.created_at AS g_created_at, g.expires_at AS g_expires_at, g.revoked_at AS g_revoked_at
FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
WHERE r.hash = ?`

// stringList is a JSON array of strings (redirect URIs).
type stringList = jsonArray[string]

// joinScopes and splitScopes write and read the space-separated scopes.
func joinScopes(s []string) string { return strings.Join(s, " ") }

// joinMethods writes authentication methods space-separated.
func joinMethods(m []domain.AuthMethod) string {
	return domain.Authentication{Methods: m}.EncodeMethods()
}

func splitScopes(s string) []string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil
	}
	return f
}

func oauthClientFromDomain(c domain.OAuthClient) oauthClientRow {
	return oauthClientRow{
		ID: string(c.ID), Name: c.Name, Type: string(c.Type),
		RedirectURIs: stringList(c.RedirectURIs), PostLogoutRedirectURIs: stringList(c.PostLogoutRedirectURIs),
		FirstParty: c.FirstParty, SecretHash: string(c.SecretHash), SecretLast4: c.SecretLast4,
		CreatedAt: domain.Timestamp(c.CreatedAt), UpdatedAt: domain.Timestamp(c.UpdatedAt),
	}
}

func (r oauthClientRow) toDomain() domain.OAuthClient {
	return domain.OAuthClient{
		ID: domain.OAuthClientID(r.ID), Name: r.Name, Type: domain.OAuthClientType(r.Type),
		RedirectURIs: []string(r.RedirectURIs), PostLogoutRedirectURIs: []string(r.PostLogoutRedirectURIs),
		FirstParty: r.FirstParty, SecretHash: domain.TokenHash(r.SecretHash), SecretLast4: r.SecretLast4,
		CreatedAt: domain.Timestamp(r.CreatedAt), UpdatedAt: domain.Timestamp(r.UpdatedAt),
	}
}

func oauthCodeFromDomain(c domain.AuthorizationCode) oauthCodeRow {
	return oauthCodeRow{
		Hash: string(c.Hash), ClientID: string(c.ClientID), UserID: string(c.UserID), RedirectURI: c.RedirectURI,
		Scopes: joinScopes(c.Scopes), Nonce: c.Nonce, CodeChallenge: c.CodeChallenge, CodeChallengeMethod: c.CodeChallengeMethod,
		AuthTime: nullTime(c.AuthTime), AuthMethods: joinMethods(c.AMR), ACR: c.ACR,
		CreatedAt: domain.Timestamp(c.CreatedAt), ExpiresAt: domain.Timestamp(c.ExpiresAt),
		ConsumedAt: nullTime(c.ConsumedAt), GrantID: string(c.GrantID),
	}
}

func (r oauthCodeRow) toDomain() domain.AuthorizationCode {
	return domain.AuthorizationCode{
		Hash: domain.TokenHash(r.Hash), ClientID: domain.OAuthClientID(r.ClientID), UserID: domain.UserID(r.UserID),
		RedirectURI: r.RedirectURI, Scopes: splitScopes(r.Scopes), Nonce: r.Nonce,
		CodeChallenge: r.CodeChallenge, CodeChallengeMethod: r.CodeChallengeMethod,
		AuthTime: fromNullTime(r.AuthTime), AMR: domain.DecodeMethods(r.AuthMethods), ACR: r.ACR,
		CreatedAt: domain.Timestamp(r.CreatedAt), ExpiresAt: domain.Timestamp(r.ExpiresAt),
		ConsumedAt: fromNullTime(r.ConsumedAt), GrantID: domain.GrantID(r.GrantID),
	}
}

func oauthGrantFromDomain(g domain.OAuthGrant) oauthGrantRow {
	return oauthGrantRow{
		ID: string(g.ID), ClientID: string(g.ClientID), UserID: nullIfEmpty(string(g.UserID)), Scopes: joinScopes(g.Scopes),
		AuthTime: nullTime(g.AuthTime), AuthMethods: joinMethods(g.AMR), ACR: g.ACR, Nonce: g.Nonce, CreatedAt: domain.Timestamp(g.CreatedAt),
		ExpiresAt: domain.Timestamp(g.ExpiresAt), RevokedAt: nullTime(g.RevokedAt),
	}
}

func (r oauthGrantRow) toDomain() domain.OAuthGrant {
	return domain.OAuthGrant{
		ID: domain.GrantID(r.ID), ClientID: domain.OAuthClientID(r.ClientID), UserID: domain.UserID(emptyIfNull(r.UserID)),
		Scopes: splitScopes(r.Scopes), AuthTime: fromNullTime(r.AuthTime), AMR: domain.DecodeMethods(r.AuthMethods), ACR: r.ACR,
		Nonce:     r.Nonce,
		CreatedAt: domain.Timestamp(r.CreatedAt), ExpiresAt: domain.Timestamp(r.ExpiresAt), RevokedAt: fromNullTime(r.RevokedAt),
	}
}

func oauthRefreshFromDomain(t domain.RefreshToken) oauthRefreshRow {
	return oauthRefreshRow{Hash: string(t.Hash), GrantID: string(t.GrantID), CreatedAt: domain.Timestamp(t.CreatedAt),
		ExpiresAt: domain.Timestamp(t.ExpiresAt), UsedAt: nullTime(t.UsedAt)}
}

func (r oauthRefreshRow) toDomain() domain.RefreshToken {
	return domain.RefreshToken{Hash: domain.TokenHash(r.Hash), GrantID: domain.GrantID(r.GrantID),
		CreatedAt: domain.Timestamp(r.CreatedAt), ExpiresAt: domain.Timestamp(r.ExpiresAt), UsedAt: fromNullTime(r.UsedAt)}
}

func (r oauthConsentRow) toDomain() domain.Consent {
	return domain.Consent{UserID: domain.UserID(r.UserID), ClientID: domain.OAuthClientID(r.ClientID), Scopes: splitScopes(r.Scopes),
		CreatedAt: domain.Timestamp(r.CreatedAt), UpdatedAt: domain.Timestamp(r.UpdatedAt)}
}

// Create implements ports.OAuthClientRepository.
func (r *OAuthClientRepository) Create(ctx context.Context, c domain.OAuthClient) error {
	row := oauthClientFromDomain(c)
	return convertErr("oauth_clients.create", conn(ctx, r.db).Create(&row).Error, nil, domain.ErrOAuthClientExists)
}

// Get implements ports.OAuthClientRepository, by primary key.
func (r *OAuthClientRepository) Get(ctx context.Context, id domain.OAuthClientID) (domain.OAuthClient, error) {
	return getOAuthClient(conn(ctx, r.db), id)
}

func getOAuthClient(db *gorm.DB, id domain.OAuthClientID) (domain.OAuthClient, error) {
	var row oauthClientRow
	if err := db.Where("id = ?", string(id)).Take(&row).Error; err != nil {
		return domain.OAuthClient{}, convertErr("oauth_clients.get", err, domain.ErrOAuthClientNotFound, nil)
	}
	return row.toDomain(), nil
}

// Update implements ports.OAuthClientRepository. On PostgreSQL the row is
// locked with SELECT … FOR UPDATE; on SQLite the immediate transaction
// already holds the database's write lock. The id cannot change.
func (r *OAuthClientRepository) Update(ctx context.Context, id domain.OAuthClientID, fn func(c *domain.OAuthClient) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		q := tx
		if DialectOf(tx) == DialectPostgres {
			q = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		c, err := getOAuthClient(q, id)
		if err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
		c.ID = id
		row := oauthClientFromDomain(c)
		return tx.Model(&oauthClientRow{}).Where("id = ?", string(id)).Select("*").Updates(&row).Error
	})
	return convertErr("oauth_clients.update", err, nil, nil)
}

// Delete implements ports.OAuthClientRepository; the foreign keys delete
// what was issued to the client.
func (r *OAuthClientRepository) Delete(ctx context.Context, id domain.OAuthClientID) error {
	res := conn(ctx, r.db).Where("id = ?", string(id)).Delete(&oauthClientRow{})
	if res.Error != nil {
		return convertErr("oauth_clients.delete", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return domain.ErrOAuthClientNotFound
	}
	return nil
}

// List implements ports.OAuthClientRepository: every client, newest first,
// read backwards through oauth_clients_created_at_idx.
func (r *OAuthClientRepository) List(ctx context.Context) ([]domain.OAuthClient, error) {
	var rows []oauthClientRow
	if err := conn(ctx, r.db).Order("created_at DESC, " + r.idOrder + " DESC").Find(&rows).Error; err != nil {
		return nil, convertErr("oauth_clients.list", err, nil, nil)
	}
	out := make([]domain.OAuthClient, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// CreateCode implements ports.OAuthGrantRepository.
func (r *OAuthGrantRepository) CreateCode(ctx context.Context, c domain.AuthorizationCode) error {
	row := oauthCodeFromDomain(c)
	return convertErr("oauth_codes.create", conn(ctx, r.db).Create(&row).Error, errOAuthOwnerNotFound, domain.ErrOAuthCodeExists)
}

// ConsumeCode implements ports.OAuthGrantRepository with one conditional
// UPDATE … RETURNING: of concurrent exchanges, the database lets exactly
// one change the row (PostgreSQL re-checks consumed_at after the winner's
// commit; SQLite runs writes one at a time), and only that one gets it
// back. The others, and any later one, read the consumed row to report
// the conflict with its grant.
func (r *OAuthGrantRepository) ConsumeCode(ctx context.Context, h domain.TokenHash, grant domain.GrantID, now time.Time) (domain.AuthorizationCode, error) {
	now = domain.Timestamp(now)
	db := conn(ctx, r.db)
	var rows []oauthCodeRow
	res := db.Model(&rows).Clauses(clause.Returning{}).
		Where("hash = ? AND consumed_at IS NULL AND expires_at > ?", string(h), now).
		Updates(map[string]any{"consumed_at": now, "grant_id": string(grant)})
	if res.Error != nil {
		return domain.AuthorizationCode{}, convertErr("oauth_codes.consume", res.Error, nil, nil)
	}
	if len(rows) == 1 {
		return rows[0].toDomain(), nil
	}
	var row oauthCodeRow
	if err := db.Where("hash = ?", string(h)).Take(&row).Error; err != nil {
		return domain.AuthorizationCode{}, convertErr("oauth_codes.consume", err, domain.ErrCodeNotFound, nil)
	}
	if row.ConsumedAt != nil {
		return row.toDomain(), domain.ErrCodeConsumed
	}
	return domain.AuthorizationCode{}, domain.ErrCodeNotFound
}

// CreateGrant implements ports.OAuthGrantRepository, in one transaction.
func (r *OAuthGrantRepository) CreateGrant(ctx context.Context, g domain.OAuthGrant, refresh *domain.RefreshToken) error {
	row := oauthGrantFromDomain(g)
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		if refresh == nil {
			return nil
		}
		t := *refresh
		t.GrantID = g.ID
		tr := oauthRefreshFromDomain(t)
		return tx.Create(&tr).Error
	})
	return convertErr("oauth_grants.create", err, errOAuthOwnerNotFound, domain.ErrOAuthGrantExists)
}

// GetGrant implements ports.OAuthGrantRepository, by primary key.
func (r *OAuthGrantRepository) GetGrant(ctx context.Context, id domain.GrantID) (domain.OAuthGrant, error) {
	var row oauthGrantRow
	if err := conn(ctx, r.db).Where("id = ?", string(id)).Take(&row).Error; err != nil {
		return domain.OAuthGrant{}, convertErr("oauth_grants.get", err, domain.ErrGrantNotFound, nil)
	}
	return row.toDomain(), nil
}

// RevokeGrant implements ports.OAuthGrantRepository: a revoked grant keeps
// its first revocation time.
func (r *OAuthGrantRepository) RevokeGrant(ctx context.Context, id domain.GrantID, at time.Time) error {
	db := conn(ctx, r.db)
	res := db.Model(&oauthGrantRow{}).Where("id = ? AND revoked_at IS NULL", string(id)).Update("revoked_at", domain.Timestamp(at))
	if res.Error != nil {
		return convertErr("oauth_grants.revoke", res.Error, nil, nil)
	}
	if res.RowsAffected == 1 {
		return nil
	}
	var n int64
	if err := db.Model(&oauthGrantRow{}).Where("id = ?", string(id)).Count(&n).Error; err != nil {
		return convertErr("oauth_grants.revoke", err, nil, nil)
	}
	if n == 0 {
		return domain.ErrGrantNotFound
	}
	return nil
}

// GetRefreshToken implements ports.OAuthGrantRepository with one query
// joining the grant, both through their primary keys.
func (r *OAuthGrantRepository) GetRefreshToken(ctx context.Context, h domain.TokenHash) (domain.RefreshToken, domain.OAuthGrant, error) {
	var row oauthRefreshLookupRow
	res := conn(ctx, r.db).Raw(oauthRefreshLookupSQL, string(h)).Scan(&row)
	if res.Error != nil {
		return domain.RefreshToken{}, domain.OAuthGrant{}, convertErr("oauth_refresh_tokens.get", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return domain.RefreshToken{}, domain.OAuthGrant{}, domain.ErrRefreshNotFound
	}
	return row.Token.toDomain(), row.Grant.toDomain(), nil
}

// RotateRefreshToken implements ports.OAuthGrantRepository. In one
// transaction, one conditional UPDATE marks the old token used, only if it
// is unused and unexpired, and the successor is inserted; the database lets
// one of concurrent rotations change the row (PostgreSQL re-checks used_at
// after the winner's commit; SQLite runs writes one at a time). When the
// UPDATE changed nothing, the token is read to tell reuse (conflict) from
// an unknown or expired token (not found).
func (r *OAuthGrantRepository) RotateRefreshToken(ctx context.Context, old domain.TokenHash, next domain.RefreshToken, now time.Time) error {
	now = domain.Timestamp(now)
	row := oauthRefreshFromDomain(next)
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		res := tx.Model(&oauthRefreshRow{}).Where("hash = ? AND used_at IS NULL AND expires_at > ?", string(old), now).
			Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			var cur oauthRefreshRow
			if err := tx.Where("hash = ?", string(old)).Take(&cur).Error; err != nil {
				if errors.Is(err, gorm.ErrRecordNotFound) {
					return domain.ErrRefreshNotFound
				}
				return err
			}
			if cur.UsedAt != nil {
				return domain.ErrRefreshTokenUsed
			}
			return domain.ErrRefreshNotFound
		}
		return tx.Create(&row).Error
	})
	return convertErr("oauth_refresh_tokens.rotate", err, domain.ErrGrantNotFound, domain.ErrOAuthRefreshTokenExists)
}

// GetConsent implements ports.OAuthGrantRepository, by primary key.
func (r *OAuthGrantRepository) GetConsent(ctx context.Context, user domain.UserID, client domain.OAuthClientID) (domain.Consent, error) {
	var row oauthConsentRow
	if err := conn(ctx, r.db).Where("user_id = ? AND client_id = ?", string(user), string(client)).Take(&row).Error; err != nil {
		return domain.Consent{}, convertErr("oauth_consents.get", err, domain.ErrConsentNotFound, nil)
	}
	return row.toDomain(), nil
}

// PutConsent implements ports.OAuthGrantRepository with one upsert; a
// replaced consent keeps its creation time.
func (r *OAuthGrantRepository) PutConsent(ctx context.Context, c domain.Consent) error {
	row := oauthConsentRow{UserID: string(c.UserID), ClientID: string(c.ClientID), Scopes: joinScopes(c.Scopes),
		CreatedAt: domain.Timestamp(c.CreatedAt), UpdatedAt: domain.Timestamp(c.UpdatedAt)}
	err := conn(ctx, r.db).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}, {Name: "client_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"scopes", "updated_at"}),
	}).Create(&row).Error
	return convertErr("oauth_consents.put", err, errOAuthOwnerNotFound, nil)
}

// ListConsents implements ports.OAuthGrantRepository, through the primary
// key's user_id prefix; a user's consents are few, so they are sorted after.
func (r *OAuthGrantRepository) ListConsents(ctx context.Context, user domain.UserID) ([]domain.Consent, error) {
	// Client ids compare byte by byte, as SQLite and the memory store do.
	order := "updated_at DESC, client_id"
	if DialectOf(r.db) == DialectPostgres {
		order = `updated_at DESC, client_id COLLATE "C"`
	}
	var rows []oauthConsentRow
	if err := conn(ctx, r.db).Where("user_id = ?", string(user)).Order(order).Find(&rows).Error; err != nil {
		return nil, convertErr("oauth_consents.list", err, nil, nil)
	}
	out := make([]domain.Consent, len(rows))
	for i, row := range rows {
		out[i] = row.toDomain()
	}
	return out, nil
}

// RevokeConsent implements ports.OAuthGrantRepository in one transaction:
// the consent is deleted by primary key and the user's unrevoked grants of
// the client are revoked through the oauth_grants user_id index.
func (r *OAuthGrantRepository) RevokeConsent(ctx context.Context, user domain.UserID, client domain.OAuthClientID, at time.Time) error {
	at = domain.Timestamp(at)
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		del := tx.Where("user_id = ? AND client_id = ?", string(user), string(client)).Delete(&oauthConsentRow{})
		if del.Error != nil {
			return del.Error
		}
		upd := tx.Model(&oauthGrantRow{}).Where("user_id = ? AND client_id = ? AND revoked_at IS NULL", string(user), string(client)).
			Update("revoked_at", at)
		if upd.Error != nil {
			return upd.Error
		}
		if del.RowsAffected == 0 && upd.RowsAffected == 0 {
			return domain.ErrConsentNotFound
		}
		return nil
	})
	return convertErr("oauth_consents.revoke", err, domain.ErrConsentNotFound, nil)
}

// DeleteExpired implements ports.OAuthGrantRepository: codes, then refresh
// tokens, then grants expired at now, each through its expires_at index, in
// one transaction. Refresh tokens deleted by the grants' cascade are not
// counted. now is normalised like the stored times: SQLite compares them as
// text.
func (r *OAuthGrantRepository) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	now = domain.Timestamp(now)
	n := 0
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		for _, model := range []any{&oauthCodeRow{}, &oauthRefreshRow{}, &oauthGrantRow{}} {
			res := tx.Where("expires_at <= ?", now).Delete(model)
			if res.Error != nil {
				return res.Error
			}
			n += int(res.RowsAffected)
		}
		return nil
	})
	if err != nil {
		return 0, convertErr("oauth.delete_expired", err, nil, nil)
	}
	return n, nil
}
