package chart

import (
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// FromBuckets is the Input of a sign-in series (the overview's hourly or
// daily buckets): each bucket's start named by label (which formats it in
// the viewer's time zone, say), its successes as the sign-ins and its
// failures as the failed sign-ins.
func FromBuckets(id, title string, buckets []ports.SignInBucket, label func(time.Time) string) Input {
	in := Input{ID: id, Title: title, Labels: make([]string, len(buckets)), SignIns: make([]int, len(buckets)), Failed: make([]int, len(buckets))}
	for i, b := range buckets {
		in.Labels[i], in.SignIns[i], in.Failed[i] = label(b.Start), b.Succeeded, b.Failed
	}
	return in
}
