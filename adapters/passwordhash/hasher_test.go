package passwordhash

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// cheap keeps the tests fast; one test checks the default parameters.
var cheap = Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}

func TestHash_default_parameters_are_owasp_argon2id(t *testing.T) {
	h := NewDefault()
	enc, err := h.Hash(context.Background(), "correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not argon2id m=19456 t=2 p=1", enc)
	}
	p, salt, key, err := parseArgon2id(enc)
	if err != nil || p != DefaultParams || len(salt) != 16 || len(key) != 32 {
		t.Fatalf("parsed %+v salt %d key %d: %v", p, len(salt), len(key), err)
	}
	ok, rehash, err := h.Verify(context.Background(), enc, "correct horse battery staple")
	if !ok || rehash || err != nil {
		t.Fatalf("Verify = %v, %v, %v", ok, rehash, err)
	}
}

func TestVerify(t *testing.T) {
	h := New(cheap, 0)
	ctx := context.Background()
	long := strings.Repeat("λ", 127) + "x"
	mustHash := func(pw string) string {
		enc, err := h.Hash(ctx, pw)
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	bcryptHash, _ := bcrypt.GenerateFromPassword([]byte("hunter2hunter2"), bcrypt.MinCost)
	weaker := New(Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}, 1)
	stronger := New(Params{MemoryKiB: 2048, Iterations: 1, Parallelism: 1}, 1)
	weakHash, _ := weaker.Hash(ctx, "pw-pw-pw-pw")

	tests := []struct {
		name, encoded, password string
		hasher                  *Hasher
		ok, rehash              bool
	}{
		{"argon2id_match", mustHash("s3cret pass phrase"), "s3cret pass phrase", h, true, false},
		{"argon2id_mismatch", mustHash("s3cret pass phrase"), "s3cret pass phrasE", h, false, false},
		{"long_password_verified_in_full", mustHash(long), long[:len(long)-1] + "y", h, false, false},
		{"long_password_match", mustHash(long), long, h, true, false},
		// Produced by Node's crypto.scryptSync exactly as Better Auth hashes.
		{"better_auth_scrypt_match", "2145a75044393d443f7df0da1fae7872:c53845b9707a63b1deb2185d0b10764dc2493d1c4889acb0b4289fc9f4ae794f18699029ff5ec1f3e34573153499c2a44aa0591ab8548e49df52bba30a3ffecc", "password123", h, true, true},
		{"better_auth_scrypt_nfkc", "df83d7dcd45e7dfef96885707d7aa911:ca54bc1deb671510d13238cd0ad3677af5b2fe708a8734d0480d3bd89fce51aaf7b570e893c4fa0c66954c528099d3d04558a2bdc0bdc1ddc3f4d6c2d46b5a2a", "Pässwörd ﬁ long passphrase", h, true, true},
		{"better_auth_scrypt_mismatch", "2145a75044393d443f7df0da1fae7872:c53845b9707a63b1deb2185d0b10764dc2493d1c4889acb0b4289fc9f4ae794f18699029ff5ec1f3e34573153499c2a44aa0591ab8548e49df52bba30a3ffecc", "password124", h, false, false},
		{"bcrypt_match", string(bcryptHash), "hunter2hunter2", h, true, true},
		{"bcrypt_mismatch", string(bcryptHash), "hunter2hunter3", h, false, false},
		{"weaker_parameters_rehash", weakHash, "pw-pw-pw-pw", stronger, true, true},
		{"malformed", "$argon2id$v=19$m=x$y$z", "anything", h, false, false},
		{"absurd_memory_refused", "$argon2id$v=19$m=99999999,t=1,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5", "anything", h, false, false},
		{"unknown_format", "plaintext-password", "plaintext-password", h, false, false},
		{"empty", "", "", h, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, rehash, err := tt.hasher.Verify(ctx, tt.encoded, tt.password)
			if err != nil || ok != tt.ok || rehash != tt.rehash {
				t.Fatalf("Verify = ok %v, rehash %v, err %v; want ok %v, rehash %v", ok, rehash, err, tt.ok, tt.rehash)
			}
		})
	}
}

func TestHash_salts_differ(t *testing.T) {
	h := New(cheap, 0)
	a, _ := h.Hash(context.Background(), "same password")
	b, _ := h.Hash(context.Background(), "same password")
	if a == b {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
}

func TestHasher_bounds_concurrent_hashes(t *testing.T) {
	h := New(cheap, 2)
	h.slots <- struct{}{} // two busy hashes hold every slot
	h.slots <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Hash(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Hash with every slot taken = %v, want to wait until ctx ends", err)
	}
	if _, _, err := h.Verify(ctx, "", "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify with every slot taken = %v", err)
	}
	<-h.slots
	<-h.slots

	// Under load, no more than the slot count ever run at once.
	var mu sync.Mutex
	running, peak := 0, 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.acquire(context.Background()); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			running++
			peak = max(peak, running)
			mu.Unlock()
			h.key("x", make([]byte, saltLen))
			mu.Lock()
			running--
			mu.Unlock()
			h.release()
		}()
	}
	wg.Wait()
	if peak > 2 {
		t.Fatalf("%d hashes ran at once with 2 slots", peak)
	}
}

func TestVerifyNothing_does_the_work(t *testing.T) {
	h := New(cheap, 0)
	if err := h.VerifyNothing(context.Background(), "whatever"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.dummy, "$argon2id$") {
		t.Fatalf("dummy hash %q is not of the current kind, so it would not cost the same", h.dummy)
	}
}

func BenchmarkHash_default(b *testing.B) {
	h := NewDefault()
	for b.Loop() {
		if _, err := h.Hash(context.Background(), "correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}
