//go:build !race

package framework

// fwBurst is the size of the concurrent sign-in burst: 500 unbounded argon2id
// hashes would need about 9.5 GiB.
const fwBurst = 500
