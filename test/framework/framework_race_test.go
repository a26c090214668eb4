//go:build race

package framework

// fwBurst is the size of the concurrent sign-in burst. The race detector
// makes each argon2id hash several times slower, so the burst is smaller
// under it, to keep the suite within its time budget; 64 unbounded hashes
// would still need about 1.2 GiB, twice the limit the heap is held to.
const fwBurst = 64
