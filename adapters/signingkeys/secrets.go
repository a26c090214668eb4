package signingkeys

import (
	"crypto/rand"
	"encoding/binary"
	"errors"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SecretSealer = (*SecretSealer)(nil)

// SecretSealer implements ports.SecretSealer with the sealer of the signing
// keys (XChaCha20-Poly1305, version byte and nonce first), under its own
// HKDF-derived keys of the same service secrets.
type SecretSealer struct {
	sealer *sealer
}

// NewSecretSealer returns a SecretSealer sealing under secrets. With no
// secret (an in-memory service started without one) it seals under a random
// secret of its own, as New does: nothing is kept in the clear, and nothing
// sealed outlives the process.
func NewSecretSealer(secrets Secrets) (*SecretSealer, error) {
	if len(secrets) == 0 {
		secrets = Secrets{rand.Text() + rand.Text()}
	}
	s, err := newSealer(secrets, secretSealInfo)
	if err != nil {
		return nil, err
	}
	return &SecretSealer{sealer: s}, nil
}

var errBinding = errors.New("signingkeys: a sealed secret needs a purpose and an id")

// secretAD binds a sealed secret to its purpose and id. Each is preceded by
// its length, so no two (purpose, id) pairs give the same bytes.
func secretAD(purpose, id string) []byte {
	ad := []byte("gatehouse sealed secret v1\x00")
	ad = binary.AppendUvarint(ad, uint64(len(purpose)))
	ad = append(ad, purpose...)
	ad = binary.AppendUvarint(ad, uint64(len(id)))
	return append(ad, id...)
}

// Seal implements ports.SecretSealer.
func (s *SecretSealer) Seal(purpose, id string, plaintext []byte) ([]byte, error) {
	if purpose == "" || id == "" {
		return nil, domain.Internal("signingkeys: seal", errBinding)
	}
	sealed, err := s.sealer.seal(secretAD(purpose, id), plaintext)
	if err != nil {
		return nil, domain.Internal("signingkeys: seal "+purpose, err)
	}
	return sealed, nil
}

// Open implements ports.SecretSealer.
func (s *SecretSealer) Open(purpose, id string, sealed []byte) ([]byte, error) {
	if purpose == "" || id == "" {
		return nil, domain.Internal("signingkeys: open", errBinding)
	}
	plain, err := s.sealer.open(secretAD(purpose, id), sealed)
	if err != nil {
		return nil, domain.Internal("signingkeys: open "+purpose+" of "+id, err)
	}
	return plain, nil
}
