package gormstore

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.IdentityProviderRepository = (*IdentityProviderRepository)(nil)

// IdentityProviderRepository stores upstream identity providers in the
// identity_providers table and their domains in identity_provider_domains.
// Deleting a provider deletes its bindings, linked accounts and sign-in
// states, deleting an organization its providers, and deleting a domain its
// binding, all by the foreign keys' ON DELETE CASCADE.
type IdentityProviderRepository struct {
	db *gorm.DB
	// getSQL, byDomainSQL, lockSQL and listSQL read providers with their
	// domain ids in one statement each: the ids are aggregated into a JSON
	// array by a subquery on the binding table's primary key, whose
	// aggregate function differs by dialect. lockSQL is getSQL with the
	// provider's row locked on PostgreSQL; listSQL sorts ids byte by byte,
	// as SQLite and the memory store compare them.
	getSQL, byDomainSQL, lockSQL, listSQL string
}

// NewIdentityProviderRepository returns an IdentityProviderRepository on db.
func NewIdentityProviderRepository(db *gorm.DB) *IdentityProviderRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	domains := `(SELECT json_group_array(b.domain_id) FROM identity_provider_domains b WHERE b.provider_id = p.id)`
	lock, idOrder := "", "p.id"
	if DialectOf(db) == DialectPostgres {
		domains = `(SELECT COALESCE(jsonb_agg(b.domain_id), '[]'::jsonb) FROM identity_provider_domains b WHERE b.provider_id = p.id)`
		lock, idOrder = " FOR UPDATE OF p", `p.id COLLATE "C"`
	}
	sel := "SELECT p.*, " + domains + " AS domain_ids "
	get := sel + "FROM identity_providers p WHERE p.id = ?"
	return &IdentityProviderRepository{
		db:          db,
		getSQL:      get,
		lockSQL:     get + lock,
		byDomainSQL: sel + "FROM identity_provider_domains d JOIN identity_providers p ON p.id = d.provider_id WHERE d.domain_id = ?",
		listSQL:     sel + "FROM identity_providers p ORDER BY " + idOrder,
	}
}

type identityProviderRow struct {
	ID                 string     `gorm:"column:id;primaryKey;type:text"`
	Preset             string     `gorm:"column:preset;not null"`
	Name               string     `gorm:"column:name;not null"`
	Issuer             string     `gorm:"column:issuer;not null"`
	ClientID           string     `gorm:"column:client_id;not null"`
	SealedClientSecret []byte     `gorm:"column:sealed_client_secret;not null"`
	AuthorizationURL   string     `gorm:"column:authorization_url;not null"`
	TokenURL           string     `gorm:"column:token_url;not null"`
	UserInfoURL        string     `gorm:"column:userinfo_url;not null"`
	JWKSURL            string     `gorm:"column:jwks_url;not null"`
	APIURL             string     `gorm:"column:api_url;not null"`
	Scopes             stringList `gorm:"column:scopes;not null"`
	TrustedForLinking  bool       `gorm:"column:trusted_for_linking;not null"`
	Enabled            bool       `gorm:"column:enabled;not null"`
	// OrganizationID is NULL for a provider of the service.
	OrganizationID *string   `gorm:"column:organization_id;index:identity_providers_organization_id_idx"`
	DefaultRole    string    `gorm:"column:default_role;not null"`
	RequireSSO     bool      `gorm:"column:require_sso;not null"`
	CreatedAt      time.Time `gorm:"column:created_at;not null;autoCreateTime:false"`
	UpdatedAt      time.Time `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (identityProviderRow) TableName() string { return "identity_providers" }

// identityProviderDomainRow binds a domain to a provider; a domain has one
// binding at most.
type identityProviderDomainRow struct {
	ProviderID string `gorm:"column:provider_id;primaryKey;type:text"`
	DomainID   string `gorm:"column:domain_id;primaryKey;type:text;uniqueIndex:identity_provider_domains_domain_id_key"`
}

func (identityProviderDomainRow) TableName() string { return "identity_provider_domains" }

// identityProviderReadRow is one row of the provider reads: the provider
// and the JSON array of its domain ids.
type identityProviderReadRow struct {
	Provider  identityProviderRow `gorm:"embedded"`
	DomainIDs stringList          `gorm:"column:domain_ids"`
}

func identityProviderFromDomain(p domain.IdentityProvider) identityProviderRow {
	e := p.Endpoints
	return identityProviderRow{
		ID: string(p.ID), Preset: string(p.Preset), Name: p.Name, Issuer: p.Issuer, ClientID: p.ClientID,
		SealedClientSecret: p.SealedClientSecret, AuthorizationURL: e.Authorization, TokenURL: e.Token,
		UserInfoURL: e.UserInfo, JWKSURL: e.JWKS, APIURL: e.API, Scopes: stringList(p.Scopes),
		TrustedForLinking: p.TrustedForLinking, Enabled: p.Enabled, OrganizationID: nullIfEmpty(string(p.OrganizationID)),
		DefaultRole: string(p.DefaultRole), RequireSSO: p.RequireSSO,
		CreatedAt: domain.Timestamp(p.CreatedAt), UpdatedAt: domain.Timestamp(p.UpdatedAt),
	}
}

// toDomain returns the provider with its domain ids in byte order: the
// bindings are a set, and every store returns them sorted.
func (rr identityProviderReadRow) toDomain() domain.IdentityProvider {
	var domains []domain.DomainID
	for _, d := range rr.DomainIDs {
		domains = append(domains, domain.DomainID(d))
	}
	slices.Sort(domains)
	r := rr.Provider
	return domain.IdentityProvider{
		ID: domain.IdentityProviderID(r.ID), Preset: domain.IdentityProviderPreset(r.Preset), Name: r.Name,
		Issuer: r.Issuer, ClientID: r.ClientID,
		Endpoints: domain.IdentityProviderEndpoints{Authorization: r.AuthorizationURL, Token: r.TokenURL,
			UserInfo: r.UserInfoURL, JWKS: r.JWKSURL, API: r.APIURL},
		SealedClientSecret: nonEmpty(r.SealedClientSecret), Scopes: []string(r.Scopes),
		TrustedForLinking: r.TrustedForLinking, Enabled: r.Enabled,
		OrganizationID: domain.OrganizationID(emptyIfNull(r.OrganizationID)), Domains: domains,
		DefaultRole: domain.OrgRole(r.DefaultRole), RequireSSO: r.RequireSSO,
		CreatedAt: domain.Timestamp(r.CreatedAt), UpdatedAt: domain.Timestamp(r.UpdatedAt),
	}
}

// bindingRows returns the bindings of provider's domains, each once.
func bindingRows(provider domain.IdentityProviderID, domains []domain.DomainID) []identityProviderDomainRow {
	rows := make([]identityProviderDomainRow, 0, len(domains))
	seen := map[domain.DomainID]bool{}
	for _, d := range domains {
		if !seen[d] {
			seen[d] = true
			rows = append(rows, identityProviderDomainRow{ProviderID: string(provider), DomainID: string(d)})
		}
	}
	return rows
}

// insertBindings binds the domains inside tx. A unique violation is a
// domain bound to another provider (the provider's own bindings were
// deleted first, and the rows are distinct); a foreign-key violation, a
// missing domain.
func insertBindings(tx *gorm.DB, rows []identityProviderDomainRow) error {
	if len(rows) == 0 {
		return nil
	}
	return convertErr("identity_provider_domains.insert", tx.Create(&rows).Error,
		domain.ErrDomainNotFound, domain.ErrIdentityProviderDomainTaken)
}

// Create implements ports.IdentityProviderRepository: the provider and its
// bindings in one transaction.
func (r *IdentityProviderRepository) Create(ctx context.Context, p domain.IdentityProvider) error {
	row := identityProviderFromDomain(p)
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return convertErr("identity_providers.create", err, domain.ErrOrganizationNotFound, domain.ErrIdentityProviderExists)
		}
		return insertBindings(tx, bindingRows(p.ID, p.Domains))
	})
	return convertErr("identity_providers.create", err, nil, nil)
}

// readProviders runs one of the provider reads and returns its rows.
func readProviders(db *gorm.DB, op, q string, args ...any) ([]domain.IdentityProvider, error) {
	var rows []identityProviderReadRow
	if err := db.Raw(q, args...).Scan(&rows).Error; err != nil {
		return nil, convertErr(op, err, nil, nil)
	}
	out := make([]domain.IdentityProvider, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// readProvider runs a provider read that selects one provider by a key.
func readProvider(db *gorm.DB, op, q, key string) (domain.IdentityProvider, error) {
	ps, err := readProviders(db, op, q, key)
	switch {
	case err != nil:
		return domain.IdentityProvider{}, err
	case len(ps) == 0:
		return domain.IdentityProvider{}, domain.ErrIdentityProviderNotFound
	}
	return ps[0], nil
}

// Get implements ports.IdentityProviderRepository, by primary key.
func (r *IdentityProviderRepository) Get(ctx context.Context, id domain.IdentityProviderID) (domain.IdentityProvider, error) {
	return readProvider(conn(ctx, r.db), "identity_providers.get", r.getSQL, string(id))
}

// GetByDomain implements ports.IdentityProviderRepository, through
// identity_provider_domains_domain_id_key and the provider's primary key.
func (r *IdentityProviderRepository) GetByDomain(ctx context.Context, d domain.DomainID) (domain.IdentityProvider, error) {
	return readProvider(conn(ctx, r.db), "identity_providers.get_by_domain", r.byDomainSQL, string(d))
}

// List implements ports.IdentityProviderRepository.
func (r *IdentityProviderRepository) List(ctx context.Context) ([]domain.IdentityProvider, error) {
	return readProviders(conn(ctx, r.db), "identity_providers.list", r.listSQL)
}

// Update implements ports.IdentityProviderRepository. On PostgreSQL the
// provider's row is locked with SELECT … FOR UPDATE; on SQLite the
// immediate transaction already holds the database's write lock. The
// bindings are replaced: deleted, then inserted again, so a domain taken by
// another provider meanwhile fails on the unique index. The id cannot
// change.
func (r *IdentityProviderRepository) Update(ctx context.Context, id domain.IdentityProviderID, fn func(p *domain.IdentityProvider) error) error {
	var fnErr error
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		p, err := readProvider(tx, "identity_providers.update", r.lockSQL, string(id))
		if err != nil {
			return err
		}
		if fnErr = fn(&p); fnErr != nil {
			return fnErr
		}
		p.ID = id
		row := identityProviderFromDomain(p)
		if err := tx.Model(&identityProviderRow{}).Where("id = ?", string(id)).Select("*").Updates(&row).Error; err != nil {
			return convertErr("identity_providers.update", err, domain.ErrOrganizationNotFound, nil)
		}
		if err := tx.Where("provider_id = ?", string(id)).Delete(&identityProviderDomainRow{}).Error; err != nil {
			return err
		}
		return insertBindings(tx, bindingRows(id, p.Domains))
	})
	if fnErr != nil {
		return fnErr
	}
	return convertErr("identity_providers.update", err, nil, nil)
}

// Delete implements ports.IdentityProviderRepository; the foreign keys
// delete its bindings, linked accounts and states.
func (r *IdentityProviderRepository) Delete(ctx context.Context, id domain.IdentityProviderID) error {
	res := conn(ctx, r.db).Where("id = ?", string(id)).Delete(&identityProviderRow{})
	return affectedOne("identity_providers.delete", res, domain.ErrIdentityProviderNotFound)
}
