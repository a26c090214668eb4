// Package webauthntest holds what tests and the load run need to play a
// WebAuthn authenticator.
package webauthntest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"

	"github.com/descope/virtualwebauthn"
)

// NewEC2Credential returns a P-256 credential whose coordinates are both 32
// bytes long as integers. virtualwebauthn encodes x and y without their
// leading zero bytes (big.Int.Bytes), which COSE forbids and go-webauthn
// rightly refuses, so about one key in 64 would fail to register.
func NewEC2Credential() virtualwebauthn.Credential {
	for {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		if len(k.X.Bytes()) != 32 || len(k.Y.Bytes()) != 32 {
			continue
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			panic(err)
		}
		return virtualwebauthn.NewCredentialWithImportedKey(virtualwebauthn.KeyTypeEC2, der)
	}
}
