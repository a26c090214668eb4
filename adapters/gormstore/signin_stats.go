package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SignInStats = (*SignInStats)(nil)

// SignInStats counts sign-ins in the sign_in_counts table, one row per hour
// and outcome. It writes outside any unit of work: a count is kept even
// when the change it follows is rolled back.
type SignInStats struct {
	db *gorm.DB
}

// NewSignInStats returns SignInStats on db.
func NewSignInStats(db *gorm.DB) *SignInStats {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &SignInStats{db: db}
}

// recordSignInSQL adds to the hour's row for the outcome, creating it: one
// statement on the primary key, atomic on both dialects (concurrent writes
// of one hour serialise on the row's lock, which is why the caller batches
// them).
const recordSignInSQL = `INSERT INTO sign_in_counts (hour, outcome, total) VALUES (?, ?, ?)
ON CONFLICT (hour, outcome) DO UPDATE SET total = sign_in_counts.total + excluded.total`

// Record implements ports.SignInStats.
func (s *SignInStats) Record(ctx context.Context, at time.Time, outcome ports.SignInOutcome, n int) error {
	if err := ports.CheckSignInRecord(outcome, n); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Exec(recordSignInSQL, domain.Timestamp(at.Truncate(time.Hour)), string(outcome), n).Error
	return convertErr("sign_in_counts.record", err, nil, nil)
}

// signInHoursSQL reads the hours of a range through the primary key, the
// outcomes of each hour summed as succeeded and failed.
const signInHoursSQL = `SELECT hour,
	SUM(CASE WHEN outcome = ? THEN total ELSE 0 END) AS succeeded,
	SUM(CASE WHEN outcome <> ? THEN total ELSE 0 END) AS failed
FROM sign_in_counts WHERE hour >= ? AND hour < ? GROUP BY hour`

type signInHourRow struct {
	Hour      time.Time
	Succeeded int
	Failed    int
}

// Series implements ports.SignInStats.
func (s *SignInStats) Series(ctx context.Context, from, to time.Time, step time.Duration) ([]ports.SignInBucket, error) {
	first, _, err := ports.SignInSpan(from, to, step)
	if err != nil {
		return nil, err
	}
	var rows []signInHourRow
	ok := string(ports.SignInSuccess)
	if err := s.db.WithContext(ctx).Raw(signInHoursSQL, ok, ok, domain.Timestamp(first), domain.Timestamp(to)).Scan(&rows).Error; err != nil {
		return nil, convertErr("sign_in_counts.series", err, nil, nil)
	}
	hours := make([]ports.SignInHour, len(rows))
	for i, r := range rows {
		hours[i] = ports.SignInHour{Hour: r.Hour.UTC(), Succeeded: r.Succeeded, Failed: r.Failed}
	}
	return ports.SignInSeries(from, to, step, hours)
}

// DeleteBefore implements ports.SignInStats.
func (s *SignInStats) DeleteBefore(ctx context.Context, before time.Time) (int, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM sign_in_counts WHERE hour < ?`, domain.Timestamp(before))
	if res.Error != nil {
		return 0, convertErr("sign_in_counts.delete_before", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}
