package signingkeys

import (
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/gatehouse/gatehouse/domain"
)

// A sealed value is
//
//	version (1 byte, sealVersion) || nonce (24 bytes) || XChaCha20-Poly1305 ciphertext and tag
//
// of the plaintext: a private key's PKCS #8 DER encoding, or a SecretSealer's
// secret. The AEAD key is HKDF-SHA256 of a service secret with an info string
// of its own per use (sealInfo for signing keys, secretSealInfo for the
// SecretSealer), so the two never share a key; the additional data names what
// the value belongs to (a key's kid and alg; a secret's purpose and id), so a
// sealed value copied onto another row does not open. The version byte lets a
// later format (another cipher or derivation) be told apart.
const (
	sealVersion    byte = 1
	sealInfo            = "gatehouse signing-key seal v1"
	secretSealInfo      = "gatehouse secret seal v1"
)

var errSealed = errors.New("signingkeys: the sealed value opens under no configured secret (altered, bound to something else, or sealed under a secret no longer configured)")

// sealer seals under the first secret and opens under any of them, so
// GATEHOUSE_SECRETS can rotate: a new first secret seals new keys while the
// old ones still open.
type sealer struct {
	aeads []cipher.AEAD
}

func newSealer(secrets []string, info string) (*sealer, error) {
	s := &sealer{}
	for _, secret := range secrets {
		key, err := hkdf.Key(sha256.New, []byte(secret), nil, info, chacha20poly1305.KeySize)
		if err != nil {
			return nil, fmt.Errorf("signingkeys: derive the sealing key: %w", err)
		}
		aead, err := chacha20poly1305.NewX(key)
		if err != nil {
			return nil, fmt.Errorf("signingkeys: %w", err)
		}
		s.aeads = append(s.aeads, aead)
	}
	if len(s.aeads) == 0 {
		return nil, errors.New("signingkeys: no service secret to seal keys with")
	}
	return s, nil
}

// additionalData binds a sealed key to its kid and algorithm.
func additionalData(id domain.SigningKeyID, alg domain.SigningAlgorithm) []byte {
	return []byte("gatehouse signing-key v1\x00" + string(alg) + "\x00" + string(id))
}

func (s *sealer) seal(ad, plaintext []byte) ([]byte, error) {
	aead := s.aeads[0]
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plaintext)+aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("signingkeys: nonce: %w", err)
	}
	return aead.Seal(out, out[1:], plaintext, ad), nil // #nosec G407 -- the nonce out[1:] was just filled by crypto/rand
}

func (s *sealer) open(ad, sealed []byte) ([]byte, error) {
	n := chacha20poly1305.NonceSizeX
	if len(sealed) < 1+n+chacha20poly1305.Overhead || sealed[0] != sealVersion {
		return nil, errSealed
	}
	for _, aead := range s.aeads {
		if plain, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], ad); err == nil {
			return plain, nil
		}
	}
	return nil, errSealed
}
