package gormstore

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.DomainRepository = (*DomainRepository)(nil)

// DomainRepository stores domains in the domains table. Deleting an
// organization deletes its domains by the foreign key's ON DELETE CASCADE.
type DomainRepository struct {
	db *gorm.DB
	// idOrder is the id column as pages and the verifier's queue sort and
	// compare it: on PostgreSQL in the "C" collation, byte by byte as SQLite
	// and the memory store compare it whatever the database's locale, which
	// is the collation the migration indexes it in.
	idOrder string
}

// NewDomainRepository returns a DomainRepository on db.
func NewDomainRepository(db *gorm.DB) *DomainRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	id := "id"
	if DialectOf(db) == DialectPostgres {
		id = `id COLLATE "C"`
	}
	return &DomainRepository{db: db, idOrder: id}
}

type domainRow struct {
	ID             string        `gorm:"column:id;primaryKey;type:text;index:domains_created_at_idx,priority:2"`
	Hostname       string        `gorm:"column:hostname;not null;uniqueIndex:domains_hostname_key"`
	OrganizationID *string       `gorm:"column:organization_id"`
	Status         string        `gorm:"column:status;not null"`
	Token          string        `gorm:"column:token;not null"`
	Records        domainRecords `gorm:"column:records;not null"`
	Attempts       int           `gorm:"column:attempts;not null"`
	LastCheckedAt  *time.Time    `gorm:"column:last_checked_at"`
	NextCheckAt    *time.Time    `gorm:"column:next_check_at"`
	WindowStart    time.Time     `gorm:"column:window_start;not null"`
	MissingSince   *time.Time    `gorm:"column:missing_since"`
	VerifiedAt     *time.Time    `gorm:"column:verified_at"`
	FailedAt       *time.Time    `gorm:"column:failed_at"`
	ManualReason   string        `gorm:"column:manual_reason;not null"`
	CreatedAt      time.Time     `gorm:"column:created_at;not null;autoCreateTime:false;index:domains_created_at_idx,priority:1"`
	UpdatedAt      time.Time     `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (domainRow) TableName() string { return "domains" }

// domainRecords is the records column: a JSON array (jsonb on PostgreSQL,
// text on SQLite) of the records with what was last observed of each.
type domainRecords = jsonArray[domainRecordJSON]

type domainRecordJSON struct {
	Type          string     `json:"type"`
	Name          string     `json:"name"`
	Value         string     `json:"value"`
	Required      bool       `json:"required"`
	Status        string     `json:"status"`
	Observed      []string   `json:"observed,omitempty"`
	LastCheckedAt *time.Time `json:"lastCheckedAt,omitempty"`
}

func domainFromDomain(d *domain.Domain) domainRow {
	s := d.State()
	records := make(domainRecords, 0, len(s.Records))
	for _, rec := range s.Records {
		records = append(records, domainRecordJSON{Type: string(rec.Type), Name: rec.Name, Value: rec.Value, Required: rec.Required,
			Status: string(rec.Status), Observed: rec.Observed, LastCheckedAt: nullTime(rec.LastCheckedAt)})
	}
	return domainRow{
		ID: string(s.ID), Hostname: s.Hostname, OrganizationID: nullIfEmpty(string(s.OrganizationID)), Status: string(s.Status),
		Token: s.Token, Records: records, Attempts: s.Attempts,
		LastCheckedAt: nullTime(s.LastCheckedAt), NextCheckAt: nullTime(s.NextCheckAt), WindowStart: domain.Timestamp(s.WindowStart),
		MissingSince: nullTime(s.MissingSince), VerifiedAt: nullTime(s.VerifiedAt), FailedAt: nullTime(s.FailedAt),
		ManualReason: s.ManualReason, CreatedAt: domain.Timestamp(s.CreatedAt), UpdatedAt: domain.Timestamp(s.UpdatedAt),
	}
}

func (r domainRow) toDomain() *domain.Domain {
	records := make([]domain.DNSRecord, 0, len(r.Records))
	for _, rec := range r.Records {
		var observed []string
		if len(rec.Observed) > 0 {
			observed = rec.Observed
		}
		records = append(records, domain.DNSRecord{Type: domain.RecordType(rec.Type), Name: rec.Name, Value: rec.Value,
			Required: rec.Required, Status: domain.RecordStatus(rec.Status), Observed: observed, LastCheckedAt: fromNullTime(rec.LastCheckedAt)})
	}
	return domain.RehydrateDomain(domain.DomainState{
		ID: domain.DomainID(r.ID), Hostname: r.Hostname, OrganizationID: domain.OrganizationID(emptyIfNull(r.OrganizationID)),
		Status: domain.DomainStatus(r.Status), Token: r.Token, Records: records, Attempts: r.Attempts,
		LastCheckedAt: fromNullTime(r.LastCheckedAt), NextCheckAt: fromNullTime(r.NextCheckAt), WindowStart: domain.Timestamp(r.WindowStart),
		MissingSince: fromNullTime(r.MissingSince), VerifiedAt: fromNullTime(r.VerifiedAt), FailedAt: fromNullTime(r.FailedAt),
		ManualReason: r.ManualReason, CreatedAt: domain.Timestamp(r.CreatedAt), UpdatedAt: domain.Timestamp(r.UpdatedAt),
	})
}

// Create implements ports.DomainRepository. A unique violation is either
// key: the id is looked up to tell which, and a hostname is reported taken
// unless the id is.
func (r *DomainRepository) Create(ctx context.Context, d *domain.Domain) error {
	db := conn(ctx, r.db)
	row := domainFromDomain(d)
	// The insert is a transaction of its own, a savepoint inside a unit of
	// work: on PostgreSQL a refused statement ends the transaction it ran
	// in, and the count below must still run in the unit.
	err := transaction(ctx, r.db, func(tx *gorm.DB) error { return tx.Create(&row).Error })
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		var n int64
		if cerr := db.Model(&domainRow{}).Where("id = ?", row.ID).Count(&n).Error; cerr != nil {
			return convertErr("domains.create", cerr, nil, nil)
		}
		if n > 0 {
			return domain.ErrDomainExists
		}
		return domain.ErrHostnameTaken
	}
	return convertErr("domains.create", err, domain.ErrOrganizationNotFound, nil)
}

// Get implements ports.DomainRepository, by primary key.
func (r *DomainRepository) Get(ctx context.Context, id domain.DomainID) (*domain.Domain, error) {
	return getDomain(conn(ctx, r.db), "id = ?", string(id))
}

// GetByHostname implements ports.DomainRepository, through
// domains_hostname_key.
func (r *DomainRepository) GetByHostname(ctx context.Context, hostname string) (*domain.Domain, error) {
	return getDomain(conn(ctx, r.db), "hostname = ?", hostname)
}

func getDomain(db *gorm.DB, where string, arg string) (*domain.Domain, error) {
	var row domainRow
	if err := db.Where(where, arg).Take(&row).Error; err != nil {
		return nil, convertErr("domains.get", err, domain.ErrDomainNotFound, nil)
	}
	return row.toDomain(), nil
}

// Update implements ports.DomainRepository. On PostgreSQL the row is locked
// with SELECT … FOR UPDATE; on SQLite the immediate transaction already
// holds the database's write lock. A foreign-key violation means fn moved
// the domain to an organization that does not exist.
func (r *DomainRepository) Update(ctx context.Context, id domain.DomainID, fn func(d *domain.Domain) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		q := tx
		if DialectOf(tx) == DialectPostgres {
			q = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		d, err := getDomain(q, "id = ?", string(id))
		if err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
		row := domainFromDomain(d)
		return tx.Model(&domainRow{}).Where("id = ?", string(id)).Select("*").Updates(&row).Error
	})
	return convertErr("domains.update", err, domain.ErrOrganizationNotFound, nil)
}

// Delete implements ports.DomainRepository.
func (r *DomainRepository) Delete(ctx context.Context, id domain.DomainID) error {
	res := conn(ctx, r.db).Where("id = ?", string(id)).Delete(&domainRow{})
	if res.Error != nil {
		return convertErr("domains.delete", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return domain.ErrDomainNotFound
	}
	return nil
}

// List implements ports.DomainRepository. The page reads newest first from
// an index whose leading columns are the filter's equality, followed by
// (created_at, id): domains_organization_id_created_at_idx with an
// organization (the status, when also given, is filtered on those rows),
// domains_status_created_at_idx with only a status, domains_created_at_idx
// without either. A cursor starts the range with a row-value comparison.
// It asks for one domain more than the page holds, to tell whether another
// page follows.
func (r *DomainRepository) List(ctx context.Context, q ports.DomainQuery) (ports.DomainPage, error) {
	if err := q.Validate(); err != nil {
		return ports.DomainPage{}, err
	}
	db := conn(ctx, r.db).Model(&domainRow{})
	if q.OrganizationID != "" {
		db = db.Where("organization_id = ?", string(q.OrganizationID))
	}
	if q.Status != "" {
		db = db.Where("status = ?", string(q.Status))
	}
	if q.After != nil {
		// The time normalised like the stored times: SQLite compares them as text.
		db = db.Where("(created_at, "+r.idOrder+") < (?, ?)", domain.Timestamp(q.After.At), q.After.ID)
	}
	var rows []domainRow
	err := db.Order("created_at DESC, " + r.idOrder + " DESC").Limit(q.Limit + 1).Find(&rows).Error
	if err != nil {
		return ports.DomainPage{}, convertErr("domains.list", err, nil, nil)
	}
	page := ports.DomainPage{Domains: make([]*domain.Domain, 0, min(len(rows), q.Limit))}
	if len(rows) > q.Limit {
		rows = rows[:q.Limit]
		last := rows[len(rows)-1]
		page.Next = &domain.Position{At: domain.Timestamp(last.CreatedAt), ID: last.ID}
	}
	for _, row := range rows {
		page.Domains = append(page.Domains, row.toDomain())
	}
	return page, nil
}

// ClaimDue implements ports.DomainRepository in one UPDATE … RETURNING,
// whose subquery reads the due domains through the partial index
// domains_next_check_at_idx, which holds only scheduled domains. On
// PostgreSQL the subquery locks what it takes and skips rows another claim
// holds (FOR UPDATE SKIP LOCKED), and a row another claim has just moved is
// checked again against the condition when locked, so two claims never
// take one domain; on SQLite the statement holds the database's write lock.
func (r *DomainRepository) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*domain.Domain, error) {
	if err := ports.ValidateDueBatch(limit, lease); err != nil {
		return nil, err
	}
	lock := ""
	if DialectOf(r.db) == DialectPostgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	q := "UPDATE domains SET next_check_at = ? WHERE id IN (SELECT id FROM domains" +
		" WHERE next_check_at IS NOT NULL AND next_check_at <= ? ORDER BY next_check_at, " + r.idOrder + " LIMIT ?" + lock + ") RETURNING *"
	var rows []domainRow
	err := conn(ctx, r.db).Raw(q, domain.Timestamp(now.Add(lease)), domain.Timestamp(now), limit).Scan(&rows).Error
	if err != nil {
		return nil, convertErr("domains.claim_due", err, nil, nil)
	}
	out := make([]*domain.Domain, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}
