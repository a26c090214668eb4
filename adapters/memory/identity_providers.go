package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.IdentityProviderRepository = (*IdentityProviderRepository)(nil)

// IdentityProviderRepository keeps upstream identity providers in the
// shared DB, with the index of their bound domains. Deleting a provider,
// its organization, a bound domain or a user cascades as the SQL foreign
// keys' ON DELETE CASCADE does (see deleteProvider, unbindDomain and
// deleteFederationOf).
type IdentityProviderRepository struct{ db *DB }

// NewIdentityProviderRepository returns an IdentityProviderRepository on db.
func NewIdentityProviderRepository(db *DB) *IdentityProviderRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &IdentityProviderRepository{db: db}
}

// storedProvider returns an independent copy of p as the SQL stores keep
// it: times in UTC at microsecond precision, empty slices nil, and the
// domains each once in byte order (the bindings are a set).
func storedProvider(p domain.IdentityProvider) domain.IdentityProvider {
	p.SealedClientSecret = cloneBytes(p.SealedClientSecret)
	p.Scopes = cloneStrings(p.Scopes)
	var domains []domain.DomainID
	for _, d := range p.Domains {
		if !slices.Contains(domains, d) {
			domains = append(domains, d)
		}
	}
	slices.Sort(domains)
	p.Domains = domains
	p.CreatedAt = timestampOrZero(p.CreatedAt)
	p.UpdatedAt = timestampOrZero(p.UpdatedAt)
	return p
}

// checkBindings returns the error of binding domains to provider, as the
// SQL insert of the bindings reports it: a domain bound to another
// provider (the unique index) before a missing one (the foreign key). The
// caller holds the lock.
func (db *DB) checkBindings(provider domain.IdentityProviderID, domains []domain.DomainID) error {
	for _, d := range domains {
		if owner, ok := db.providerByDomain[d]; ok && owner != provider {
			return domain.ErrIdentityProviderDomainTaken
		}
	}
	for _, d := range domains {
		if _, ok := db.domains[d]; !ok {
			return domain.ErrDomainNotFound
		}
	}
	return nil
}

// putProvider stores a copy of p and moves its bindings in the index. The
// caller holds the write lock and has checked the bindings.
func (db *DB) putProvider(p domain.IdentityProvider) {
	p = storedProvider(p)
	if old, ok := db.identityProviders[p.ID]; ok {
		for _, d := range old.Domains {
			unset(db, db.providerByDomain, d)
		}
	}
	for _, d := range p.Domains {
		set(db, db.providerByDomain, d, p.ID)
	}
	set(db, db.identityProviders, p.ID, p)
}

// deleteProvider removes provider id with its bindings, linked accounts and
// states. The caller holds the write lock.
func (db *DB) deleteProvider(id domain.IdentityProviderID) {
	for _, d := range db.identityProviders[id].Domains {
		unset(db, db.providerByDomain, d)
	}
	unset(db, db.identityProviders, id)
	for aid, a := range db.linkedAccounts {
		if a.ProviderID == id {
			db.deleteLinkedAccount(aid, a)
		}
	}
	for k, s := range db.federationStates {
		if s.ProviderID == id {
			unset(db, db.federationStates, k)
		}
	}
}

// deleteOrganizationProviders removes org's providers, as the SQL foreign
// key's ON DELETE CASCADE does. The caller holds the write lock.
func (db *DB) deleteOrganizationProviders(org domain.OrganizationID) {
	for id, p := range db.identityProviders {
		if p.OrganizationID == org {
			db.deleteProvider(id)
		}
	}
}

// unbindDomain removes domain d from the provider it is bound to, as the
// SQL foreign key's ON DELETE CASCADE does. The caller holds the write lock.
func (db *DB) unbindDomain(d domain.DomainID) {
	id, ok := db.providerByDomain[d]
	if !ok {
		return
	}
	unset(db, db.providerByDomain, d)
	p := db.identityProviders[id]
	p.Domains = slices.DeleteFunc(slices.Clone(p.Domains), func(x domain.DomainID) bool { return x == d })
	if len(p.Domains) == 0 {
		p.Domains = nil
	}
	set(db, db.identityProviders, id, p)
}

// Create implements ports.IdentityProviderRepository. As the SQL insert, it
// checks the key before the foreign key, and the provider before its
// bindings.
func (r *IdentityProviderRepository) Create(ctx context.Context, p domain.IdentityProvider) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.identityProviders[p.ID]; ok {
		return domain.ErrIdentityProviderExists
	}
	if !r.db.hasOrganization(p.OrganizationID) {
		return domain.ErrOrganizationNotFound
	}
	if err := r.db.checkBindings(p.ID, p.Domains); err != nil {
		return err
	}
	r.db.putProvider(p)
	return nil
}

// Get implements ports.IdentityProviderRepository.
func (r *IdentityProviderRepository) Get(ctx context.Context, id domain.IdentityProviderID) (domain.IdentityProvider, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	p, ok := r.db.identityProviders[id]
	if !ok {
		return domain.IdentityProvider{}, domain.ErrIdentityProviderNotFound
	}
	return storedProvider(p), nil
}

// GetByDomain implements ports.IdentityProviderRepository.
func (r *IdentityProviderRepository) GetByDomain(ctx context.Context, d domain.DomainID) (domain.IdentityProvider, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	id, ok := r.db.providerByDomain[d]
	if !ok {
		return domain.IdentityProvider{}, domain.ErrIdentityProviderNotFound
	}
	return storedProvider(r.db.identityProviders[id]), nil
}

// List implements ports.IdentityProviderRepository.
func (r *IdentityProviderRepository) List(ctx context.Context) ([]domain.IdentityProvider, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	out := make([]domain.IdentityProvider, 0, len(r.db.identityProviders))
	for _, p := range r.db.identityProviders {
		out = append(out, storedProvider(p))
	}
	slices.SortFunc(out, func(a, b domain.IdentityProvider) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return out, nil
}

// Update implements ports.IdentityProviderRepository. The write lock makes
// it atomic: fn runs once. The id cannot change.
func (r *IdentityProviderRepository) Update(ctx context.Context, id domain.IdentityProviderID, fn func(p *domain.IdentityProvider) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.identityProviders[id]
	if !ok {
		return domain.ErrIdentityProviderNotFound
	}
	p := storedProvider(stored)
	if err := fn(&p); err != nil {
		return err
	}
	p.ID = id
	if !r.db.hasOrganization(p.OrganizationID) {
		return domain.ErrOrganizationNotFound
	}
	if err := r.db.checkBindings(id, p.Domains); err != nil {
		return err
	}
	r.db.putProvider(p)
	return nil
}

// Delete implements ports.IdentityProviderRepository.
func (r *IdentityProviderRepository) Delete(ctx context.Context, id domain.IdentityProviderID) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.identityProviders[id]; !ok {
		return domain.ErrIdentityProviderNotFound
	}
	r.db.deleteProvider(id)
	return nil
}
