package signingkeys_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/x509"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/domain"
)

func mustSealer(t *testing.T, secrets ...string) *signingkeys.SecretSealer {
	t.Helper()
	s, err := signingkeys.NewSecretSealer(secrets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustSeal(t *testing.T, s *signingkeys.SecretSealer, purpose, id string, plaintext []byte) []byte {
	t.Helper()
	sealed, err := s.Seal(purpose, id, plaintext)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return sealed
}

// mustNotOpen fails unless opening gives an internal error and no plaintext.
func mustNotOpen(t *testing.T, s *signingkeys.SecretSealer, purpose, id string, sealed []byte, why string) {
	t.Helper()
	plain, err := s.Open(purpose, id, sealed)
	if err == nil || domain.KindOf(err) != domain.KindInternal || plain != nil {
		t.Errorf("%s: Open = %q, %v; want no plaintext and an internal error", why, plain, err)
	}
}

var totpSecret = []byte("12345678901234567890")

// Ensure a sealed secret opens to the same bytes, does not hold them in the
// clear, and seals differently each time (a fresh nonce).
func TestSecretSealer_round_trip(t *testing.T) {
	s := mustSealer(t, secretA)
	a := mustSeal(t, s, "totp", "user-1", totpSecret)
	b := mustSeal(t, s, "totp", "user-1", totpSecret)
	if bytes.Equal(a, b) {
		t.Fatal("sealing twice gave the same bytes")
	}
	if bytes.Contains(a, totpSecret) {
		t.Fatal("the sealed value holds the secret in the clear")
	}
	for _, sealed := range [][]byte{a, b} {
		plain, err := s.Open("totp", "user-1", sealed)
		if err != nil || !bytes.Equal(plain, totpSecret) {
			t.Fatalf("Open = %q, %v; want %q", plain, err, totpSecret)
		}
	}
	// An empty plaintext round-trips too.
	plain, err := s.Open("totp", "user-1", mustSeal(t, s, "totp", "user-1", nil))
	if err != nil || len(plain) != 0 {
		t.Fatalf("Open of an empty secret = %q, %v", plain, err)
	}
}

// Ensure a sealed secret opens only for the purpose and id it was sealed
// for: moved to another user or purpose it fails, as do the same bytes
// split differently between purpose and id, and an empty purpose or id is
// refused outright.
func TestSecretSealer_wrong_purpose_or_id(t *testing.T) {
	s := mustSealer(t, secretA)
	sealed := mustSeal(t, s, "totp", "user-1", totpSecret)
	mustNotOpen(t, s, "totp", "user-2", sealed, "another id")
	mustNotOpen(t, s, "backup", "user-1", sealed, "another purpose")
	mustNotOpen(t, s, "user-1", "totp", sealed, "purpose and id swapped")
	mustNotOpen(t, s, "totpu", "ser-1", sealed, "the boundary moved")
	mustNotOpen(t, s, "totp", "", sealed, "an empty id")
	mustNotOpen(t, s, "", "user-1", sealed, "an empty purpose")
	for _, pair := range [][2]string{{"", "user-1"}, {"totp", ""}} {
		if _, err := s.Seal(pair[0], pair[1], totpSecret); domain.KindOf(err) != domain.KindInternal {
			t.Errorf("Seal(%q, %q) = %v, want an internal error", pair[0], pair[1], err)
		}
	}
}

// Ensure any change to a sealed secret (version byte, nonce, ciphertext or
// tag), cutting it short or lengthening it, makes it fail to open.
func TestSecretSealer_tampering(t *testing.T) {
	s := mustSealer(t, secretA)
	sealed := mustSeal(t, s, "totp", "user-1", totpSecret)
	for i := range sealed {
		changed := bytes.Clone(sealed)
		changed[i] ^= 0x01
		mustNotOpen(t, s, "totp", "user-1", changed, "a bit flipped")
	}
	for _, n := range []int{0, 1, 25, len(sealed) - 1} {
		mustNotOpen(t, s, "totp", "user-1", sealed[:n], "cut short")
	}
	mustNotOpen(t, s, "totp", "user-1", append(bytes.Clone(sealed), 0), "lengthened")
	mustNotOpen(t, s, "totp", "user-1", nil, "nil")
}

// Ensure a secret sealed under an old service secret still opens once a new
// secret is put first, new seals use the new first secret, and a secret no
// longer configured opens nothing.
func TestSecretSealer_secret_rotation(t *testing.T) {
	old := mustSeal(t, mustSealer(t, secretA), "totp", "user-1", totpSecret)
	rotated := mustSealer(t, secretB, secretA)
	if plain, err := rotated.Open("totp", "user-1", old); err != nil || !bytes.Equal(plain, totpSecret) {
		t.Fatalf("Open after rotation (old secret second) = %q, %v", plain, err)
	}
	mustNotOpen(t, mustSealer(t, secretB), "totp", "user-1", old, "the old secret dropped")
	sealedAfter := mustSeal(t, rotated, "totp", "user-1", totpSecret)
	if plain, err := mustSealer(t, secretB).Open("totp", "user-1", sealedAfter); err != nil || !bytes.Equal(plain, totpSecret) {
		t.Fatalf("a secret sealed after rotation does not open under the new secret alone: %q, %v", plain, err)
	}
	mustNotOpen(t, mustSealer(t, secretA), "totp", "user-1", sealedAfter, "sealed after rotation, opened under the old secret alone")
}

// Ensure a sealer made without a service secret seals under a random one of
// its own: it opens its own values, and another such sealer cannot.
func TestSecretSealer_without_service_secret(t *testing.T) {
	a, b := mustSealer(t), mustSealer(t)
	sealed := mustSeal(t, a, "totp", "user-1", totpSecret)
	if plain, err := a.Open("totp", "user-1", sealed); err != nil || !bytes.Equal(plain, totpSecret) {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	mustNotOpen(t, b, "totp", "user-1", sealed, "another process's random secret")
}

// sealLike seals plaintext by the documented format, independently of the
// package: version 1, a 24-byte nonce, then XChaCha20-Poly1305 under
// HKDF-SHA256(secret, info) with additional data ad.
func sealLike(t *testing.T, secret, info string, ad, plaintext []byte) []byte {
	t.Helper()
	key, err := hkdf.Key(sha256.New, []byte(secret), nil, info, chacha20poly1305.KeySize)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		t.Fatal(err)
	}
	nonce := bytes.Repeat([]byte{7}, chacha20poly1305.NonceSizeX)
	return aead.Seal(append([]byte{1}, nonce...), nonce, plaintext, ad)
}

// Ensure the sealed formats stay readable: a secret and a signing key sealed
// as documented (and as earlier versions stored them) still open, and
// neither opens as the other, since each use has its own derived key.
func TestSeal_formats_are_stable_and_separate(t *testing.T) {
	ad := append([]byte("gatehouse sealed secret v1\x00"), 4, 't', 'o', 't', 'p', 6, 'u', 's', 'e', 'r', '-', '1')
	sealed := sealLike(t, secretA, "gatehouse secret seal v1", ad, totpSecret)
	if plain, err := mustSealer(t, secretA).Open("totp", "user-1", sealed); err != nil || !bytes.Equal(plain, totpSecret) {
		t.Fatalf("Open of a secret sealed by the documented format = %q, %v", plain, err)
	}
	// The same bytes sealed under the signing keys' derived key do not open.
	other := sealLike(t, secretA, "gatehouse signing-key seal v1", ad, totpSecret)
	mustNotOpen(t, mustSealer(t, secretA), "totp", "user-1", other, "sealed under the signing-key derivation")

	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	k := domain.SigningKey{ID: "k1", Alg: domain.AlgEdDSA,
		SealedPrivate: sealLike(t, secretA, "gatehouse signing-key seal v1", []byte("gatehouse signing-key v1\x00EdDSA\x00k1"), der)}
	got, err := signingkeys.PrivateKey(signingkeys.Secrets{secretA}, k)
	if err != nil {
		t.Fatalf("a signing key sealed by the documented format does not open: %v", err)
	}
	if !priv.Equal(got) {
		t.Fatal("the signing key opened to another key")
	}
	k.SealedPrivate = sealLike(t, secretA, "gatehouse secret seal v1", []byte("gatehouse signing-key v1\x00EdDSA\x00k1"), der)
	if _, err := signingkeys.PrivateKey(signingkeys.Secrets{secretA}, k); err == nil {
		t.Fatal("a signing key sealed under the secret sealer's derivation opened")
	}
}
