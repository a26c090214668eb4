package passwordhash

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/scrypt"
	"golang.org/x/text/unicode/norm"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.PasswordHasher = (*Hasher)(nil)

// Params are argon2id's cost parameters.
type Params struct {
	MemoryKiB   uint32
	Iterations  uint32
	Parallelism uint8
}

// DefaultParams is OWASP's argon2id row m=19 MiB, t=2, p=1.
var DefaultParams = Params{MemoryKiB: 19 * 1024, Iterations: 2, Parallelism: 1}

const (
	saltLen = 16
	keyLen  = 32
)

// Hasher hashes with argon2id and verifies argon2id, Better Auth scrypt and
// bcrypt hashes. A semaphore bounds concurrent hashes, so memory stays under
// slots × MemoryKiB whatever the load.
type Hasher struct {
	params Params
	slots  chan struct{}
	dummy  string
}

// New returns a Hasher with params that runs at most slots hashes at once
// (slots ≤ 0 means twice the number of CPUs: more would only queue on them).
func New(params Params, slots int) *Hasher {
	if slots <= 0 {
		slots = 2 * runtime.GOMAXPROCS(0)
	}
	h := &Hasher{params: params, slots: make(chan struct{}, slots)}
	h.dummy = h.encode(make([]byte, saltLen), h.key("gatehouse-dummy-password", make([]byte, saltLen)))
	return h
}

// NewDefault returns a Hasher with DefaultParams and the default slot count.
func NewDefault() *Hasher { return New(DefaultParams, 0) }

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Hasher) release() { <-h.slots }

// key derives the argon2id key of the NFKC form of password, so a
// passphrase typed with composed or decomposed accents is the same password
// (NIST SP 800-63B-4 §3.1.1.2; Better Auth's scrypt does the same).
func (h *Hasher) key(password string, salt []byte) []byte {
	return argon2.IDKey([]byte(norm.NFKC.String(password)), salt, h.params.Iterations, h.params.MemoryKiB, h.params.Parallelism, keyLen)
}

func (h *Hasher) encode(salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		h.params.MemoryKiB, h.params.Iterations, h.params.Parallelism, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// Hash implements ports.PasswordHasher.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	return h.encode(salt, h.key(password, salt)), nil
}

// Verify implements ports.PasswordHasher.
func (h *Hasher) Verify(ctx context.Context, encoded, password string) (ok, rehash bool, err error) {
	if err := h.acquire(ctx); err != nil {
		return false, false, err
	}
	defer h.release()
	switch {
	case strings.HasPrefix(encoded, "$argon2id$"):
		p, salt, key, perr := parseArgon2id(encoded)
		if perr != nil {
			return false, false, nil
		}
		got := argon2.IDKey([]byte(norm.NFKC.String(password)), salt, p.Iterations, p.MemoryKiB, p.Parallelism, uint32(len(key))) // #nosec G115 -- parseArgon2id keeps len(key) within 16..64
		ok = subtle.ConstantTimeCompare(got, key) == 1
		return ok, ok && (p != h.params || len(salt) < saltLen || len(key) < keyLen), nil
	case strings.HasPrefix(encoded, "$2a$"), strings.HasPrefix(encoded, "$2b$"), strings.HasPrefix(encoded, "$2y$"):
		ok = bcrypt.CompareHashAndPassword([]byte(encoded), []byte(password)) == nil
		return ok, ok, nil
	case isBetterAuthScrypt(encoded):
		ok = verifyBetterAuthScrypt(encoded, password)
		return ok, ok, nil
	}
	return false, false, nil
}

// VerifyNothing implements ports.PasswordHasher.
func (h *Hasher) VerifyNothing(ctx context.Context, password string) error {
	_, _, err := h.Verify(ctx, h.dummy, password)
	return err
}

var errMalformed = errors.New("malformed argon2id hash")

// parseArgon2id reads $argon2id$v=19$m=…,t=…,p=…$salt$key.
func parseArgon2id(s string) (Params, []byte, []byte, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return Params{}, nil, nil, errMalformed
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Iterations, &p.Parallelism); err != nil {
		return Params{}, nil, nil, errMalformed
	}
	// Refuse parameters no hash of ours has, so a planted hash cannot make a
	// sign-in burn gigabytes or minutes.
	if p.MemoryKiB < 1024 || p.MemoryKiB > 256*1024 || p.Iterations < 1 || p.Iterations > 16 || p.Parallelism < 1 || p.Parallelism > 8 {
		return Params{}, nil, nil, errMalformed
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 || len(key) > 64 {
		return Params{}, nil, nil, errMalformed
	}
	return p, salt, key, nil
}

// Better Auth's default: scrypt N=16384, r=16, p=1, 64-byte key over the NFKC
// password, stored as "<salt hex>:<key hex>", where the salt passed to scrypt
// is the hex string's bytes, not the decoded ones.
const (
	baN, baR, baP, baKeyLen = 16384, 16, 1, 64
)

func isBetterAuthScrypt(s string) bool {
	salt, key, ok := strings.Cut(s, ":")
	if !ok || len(salt) != 32 || len(key) != 2*baKeyLen {
		return false
	}
	_, err1 := hex.DecodeString(salt)
	_, err2 := hex.DecodeString(key)
	return err1 == nil && err2 == nil
}

func verifyBetterAuthScrypt(s, password string) bool {
	salt, keyHex, _ := strings.Cut(s, ":")
	want, _ := hex.DecodeString(keyHex)
	got, err := scrypt.Key([]byte(norm.NFKC.String(password)), []byte(salt), baN, baR, baP, baKeyLen)
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}
