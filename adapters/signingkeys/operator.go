package signingkeys

import (
	"crypto"
	"encoding/json"

	"github.com/gatehouse/gatehouse/domain"
)

// PrivateKey opens the stored key k with secrets and returns its private
// key (ed25519.PrivateKey or *rsa.PrivateKey). It is what an operator who
// holds the service secret and the database can do, and what tests do to
// forge tokens whose signatures are valid but whose claims are not.
func PrivateKey(secrets Secrets, k domain.SigningKey) (crypto.Signer, error) {
	j, err := New(secrets)
	if err != nil {
		return nil, err
	}
	return j.privateKey(k)
}

// SignClaims signs claims (any JSON-encodable value) with the stored key k
// exactly as the service does: a compact JWS with the header {alg, kid, typ}.
func SignClaims(secrets Secrets, k domain.SigningKey, typ string, claims any) (string, error) {
	priv, err := PrivateKey(secrets, k)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	js, err := newJOSESigner(k, priv, typ)
	if err != nil {
		return "", err
	}
	obj, err := js.Sign(payload)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}
