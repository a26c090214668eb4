package ports

import "context"

// DNSResolver looks up the records that prove a domain. A name or record
// that does not exist is not an error: the answer is then empty. An error
// means the lookup itself failed (timeout, SERVFAIL, refused), and the
// caller should try again later rather than conclude anything.
type DNSResolver interface {
	// LookupTXT returns the TXT strings at name, each record's strings
	// joined as RFC 7208 §3.3 joins them.
	LookupTXT(ctx context.Context, name string) ([]string, error)
	// LookupCNAME returns the target of the CNAME record at name, without
	// the trailing dot, or "" when name has no CNAME record.
	LookupCNAME(ctx context.Context, name string) (string, error)
}
