// Package memory implements the storage ports in process memory. It is what
// tests swap in, and it passes the same conformance suites as the SQL stores.
package memory
