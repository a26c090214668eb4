// Package dnstest runs a real DNS server on loopback, over UDP and TCP, for
// end-to-end tests of the DNS adapter and of domain verification: tests set
// and remove TXT, CNAME and A records, make a name fail with SERVFAIL or go
// unanswered, and count the queries. It answers like a recursive resolver
// in front of one authoritative zone holding every record it is given:
// NXDOMAIN and NODATA with an SOA, CNAME chains followed within its data,
// and UDP answers truncated to the client's EDNS0 size so that clients
// retry over TCP. It is imported by tests only.
package dnstest
