// Package dnsresolver implements ports.DNSResolver on Go's own resolver,
// asking the system's nameservers (/etc/resolv.conf) or one configured
// nameserver, over UDP with TCP when an answer is truncated.
package dnsresolver
