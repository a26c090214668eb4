package signingkeys_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/domain"
)

const (
	secretA = "secret-a-0123456789-abcdefghijklmnopqrstuvwxyz"
	secretB = "secret-b-0123456789-abcdefghijklmnopqrstuvwxyz"
)

func mustNew(t *testing.T, secrets ...string) *signingkeys.JOSE {
	t.Helper()
	j, err := signingkeys.New(secrets)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func mustGenerate(t *testing.T, j *signingkeys.JOSE, id string, alg domain.SigningAlgorithm) domain.SigningKey {
	t.Helper()
	k, err := j.Generate(domain.SigningKeyID(id), alg)
	if err != nil {
		t.Fatalf("Generate %s: %v", alg, err)
	}
	return k
}

// Ensure each algorithm's key signs a token that its public key verifies,
// with the header {alg, kid, typ}.
func TestJOSE_sign_then_verify(t *testing.T) {
	j := mustNew(t, secretA)
	for _, alg := range domain.SigningAlgorithms {
		t.Run(string(alg), func(t *testing.T) {
			k := mustGenerate(t, j, "kid-"+string(alg), alg)
			signer, err := j.Open(k)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			token, err := signer.Sign("at+jwt", []byte(`{"sub":"u1"}`))
			if err != nil {
				t.Fatal(err)
			}
			head, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
			var h map[string]any
			if err := json.Unmarshal(head, &h); err != nil {
				t.Fatal(err)
			}
			if len(h) != 3 || h["alg"] != string(alg) || h["kid"] != string(k.ID) || h["typ"] != "at+jwt" {
				t.Fatalf("header = %v", h)
			}
			hdr, err := j.Header(token, alg)
			if err != nil || hdr.KeyID != k.ID || hdr.Type != "at+jwt" {
				t.Fatalf("Header = %+v, %v", hdr, err)
			}
			v, err := j.Public(k)
			if err != nil {
				t.Fatalf("Public: %v", err)
			}
			payload, err := v.Verify(token)
			if err != nil || string(payload) != `{"sub":"u1"}` {
				t.Fatalf("Verify = %s, %v", payload, err)
			}
			// The other algorithm is refused, by the header parser and the key.
			other := domain.AlgRS256
			if alg == other {
				other = domain.AlgEdDSA
			}
			if _, err := j.Header(token, other); domain.KindOf(err) != domain.KindUnauthenticated {
				t.Fatalf("Header with %s = %v, want unauthenticated", other, err)
			}
			// A changed payload no longer verifies.
			parts := strings.Split(token, ".")
			parts[1] = base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u2"}`))
			if _, err := v.Verify(strings.Join(parts, ".")); domain.KindOf(err) != domain.KindUnauthenticated {
				t.Fatalf("Verify of a changed payload = %v", err)
			}
		})
	}
}

// Ensure the public JWK holds kid, alg, use and public members only.
func TestJOSE_public_jwk_has_no_private_members(t *testing.T) {
	j := mustNew(t, secretA)
	want := map[domain.SigningAlgorithm][]string{
		domain.AlgEdDSA: {"alg", "crv", "kid", "kty", "use", "x"},
		domain.AlgRS256: {"alg", "e", "kid", "kty", "n", "use"},
	}
	for alg, members := range want {
		k := mustGenerate(t, j, "k1", alg)
		var m map[string]any
		if err := json.Unmarshal(k.PublicJWK, &m); err != nil {
			t.Fatal(err)
		}
		var got []string
		for name := range m {
			got = append(got, name)
		}
		if strings.Join(slices.Sorted(slices.Values(got)), ",") != strings.Join(members, ",") {
			t.Errorf("%s JWK members = %v, want %v", alg, slices.Sorted(slices.Values(got)), members)
		}
		if m["kid"] != "k1" || m["alg"] != string(alg) || m["use"] != "sig" {
			t.Errorf("%s JWK = %v", alg, m)
		}
	}
}

// Ensure a sealed key opens under its secret, under any configured secret
// after a rotation of GATEHOUSE_SECRETS, and under no other.
func TestSeal_round_trip_and_secret_rotation(t *testing.T) {
	k := mustGenerate(t, mustNew(t, secretA), "k1", domain.AlgEdDSA)
	if _, err := mustNew(t, secretA).Open(k); err != nil {
		t.Fatalf("Open under the sealing secret: %v", err)
	}
	if _, err := mustNew(t, secretB, secretA).Open(k); err != nil {
		t.Fatalf("Open after rotation (old secret second): %v", err)
	}
	if _, err := mustNew(t, secretB).Open(k); domain.KindOf(err) != domain.KindInternal {
		t.Fatalf("Open under another secret = %v, want an internal error", err)
	}
	// A key sealed after the rotation uses the new first secret.
	k2 := mustGenerate(t, mustNew(t, secretB, secretA), "k2", domain.AlgRS256)
	if _, err := mustNew(t, secretA).Open(k2); err == nil {
		t.Fatal("a key sealed after rotation opened under the old secret alone")
	}
}

// Ensure any change to the sealed bytes (version, nonce, ciphertext, tag)
// makes the key fail to open.
func TestSeal_tampered_ciphertext_fails(t *testing.T) {
	j := mustNew(t, secretA)
	k := mustGenerate(t, j, "k1", domain.AlgEdDSA)
	for _, i := range []int{0, 1, 24, 25, len(k.SealedPrivate) / 2, len(k.SealedPrivate) - 1} {
		tampered := k
		tampered.SealedPrivate = bytes.Clone(k.SealedPrivate)
		tampered.SealedPrivate[i] ^= 0x01
		if _, err := j.Open(tampered); err == nil {
			t.Errorf("a key with byte %d flipped opened", i)
		}
	}
	short := k
	short.SealedPrivate = k.SealedPrivate[:20]
	if _, err := j.Open(short); err == nil {
		t.Error("a truncated key opened")
	}
}

// Ensure the additional data binds a sealed key to its kid and algorithm:
// copied onto another key's row, it does not open.
func TestSeal_additional_data_binds_kid_and_alg(t *testing.T) {
	j := mustNew(t, secretA)
	k := mustGenerate(t, j, "k1", domain.AlgEdDSA)
	otherID := k
	otherID.ID = "k2"
	if _, err := j.Open(otherID); err == nil {
		t.Error("the sealed key opened under another kid")
	}
	otherAlg := k
	otherAlg.Alg = domain.AlgRS256
	if _, err := j.Open(otherAlg); err == nil {
		t.Error("the sealed key opened under another alg")
	}
}

// Ensure the sealed bytes hold no plaintext private key material.
func TestSeal_holds_no_plaintext(t *testing.T) {
	for _, alg := range domain.SigningAlgorithms {
		k := mustGenerate(t, mustNew(t, secretA), "k1", alg)
		priv, err := signingkeys.PrivateKey(signingkeys.Secrets{secretA}, k)
		if err != nil {
			t.Fatal(err)
		}
		var secretBytes [][]byte
		switch p := priv.(type) {
		case ed25519.PrivateKey:
			secretBytes = [][]byte{p.Seed()}
		case *rsa.PrivateKey:
			secretBytes = [][]byte{p.D.Bytes(), p.Primes[0].Bytes(), p.Primes[1].Bytes()}
		default:
			t.Fatalf("PrivateKey = %T", priv)
		}
		for _, s := range secretBytes {
			if bytes.Contains(k.SealedPrivate, s[:16]) {
				t.Errorf("%s: the sealed key contains private key material", alg)
			}
		}
		if bytes.Contains(k.SealedPrivate, []byte("PRIVATE")) || k.SealedPrivate[0] != 1 {
			t.Errorf("%s: sealed key is not the versioned ciphertext", alg)
		}
	}
}

// Ensure a stored JWK that does not name its key, or carries private
// members, is refused.
func TestJOSE_public_refuses_mismatched_or_private_jwk(t *testing.T) {
	j := mustNew(t, secretA)
	k := mustGenerate(t, j, "k1", domain.AlgEdDSA)
	otherID := k
	otherID.ID = "k2"
	if _, err := j.Public(otherID); err == nil {
		t.Error("a JWK with another kid was accepted")
	}
	priv, err := signingkeys.PrivateKey(signingkeys.Secrets{secretA}, k)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(k.PublicJWK, &m)
	m["d"] = base64.RawURLEncoding.EncodeToString(priv.(ed25519.PrivateKey).Seed())
	withD := k
	withD.PublicJWK, _ = json.Marshal(m)
	if _, err := j.Public(withD); err == nil {
		t.Error("a JWK with private members was accepted")
	}
}

// Ensure SignClaims (what tests and operators holding the secret use)
// signs tokens the service's keys verify.
func TestSignClaims_verifies_with_the_public_key(t *testing.T) {
	j := mustNew(t, secretA)
	k := mustGenerate(t, j, "k1", domain.AlgRS256)
	token, err := signingkeys.SignClaims(signingkeys.Secrets{secretA}, k, "JWT", map[string]any{"sub": "forged"})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := j.Public(k)
	if payload, err := v.Verify(token); err != nil || string(payload) != `{"sub":"forged"}` {
		t.Fatalf("Verify = %s, %v", payload, err)
	}
}
