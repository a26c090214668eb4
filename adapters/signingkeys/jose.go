package signingkeys

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"sync"

	"github.com/go-jose/go-jose/v4"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.JOSE = (*JOSE)(nil)

// Secrets are the service secrets: the first seals new private keys; every
// one is tried when opening them (GATEHOUSE_SECRETS rotation).
type Secrets []string

// RSABits is the size of the RSA keys Generate makes.
const RSABits = 2048

// JOSE implements ports.JOSE on go-jose.
type JOSE struct {
	sealer *sealer
}

// New returns the JOSE adapter sealing under secrets. With no secret (an
// in-memory service started without one) it seals under a random secret of
// its own, so private keys are still never kept in the clear but do not
// outlive the process.
func New(secrets Secrets) (*JOSE, error) {
	if len(secrets) == 0 {
		secrets = Secrets{rand.Text() + rand.Text()}
	}
	s, err := newSealer(secrets, sealInfo)
	if err != nil {
		return nil, err
	}
	return &JOSE{sealer: s}, nil
}

// errToken is every verification failure: the reason is never told to the
// caller (it is the application's to log if it wants).
var errToken = domain.NewError(domain.KindUnauthenticated, "token.invalid", "The token is invalid or expired")

func unsupported(alg domain.SigningAlgorithm) error {
	return domain.Internal("signingkeys", fmt.Errorf("unsupported algorithm %q", alg))
}

// Generate makes a key pair: Ed25519 for EdDSA, RSA-2048 for RS256.
func (j *JOSE) Generate(id domain.SigningKeyID, alg domain.SigningAlgorithm) (domain.SigningKey, error) {
	var (
		priv crypto.Signer
		err  error
	)
	switch alg {
	case domain.AlgEdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	case domain.AlgRS256:
		priv, err = rsa.GenerateKey(rand.Reader, RSABits)
	default:
		return domain.SigningKey{}, unsupported(alg)
	}
	if err != nil {
		return domain.SigningKey{}, domain.Internal("signingkeys: generate", err)
	}
	public, err := publicJWK(id, alg, priv.Public())
	if err != nil {
		return domain.SigningKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return domain.SigningKey{}, domain.Internal("signingkeys: encode", err)
	}
	sealed, err := j.sealer.seal(additionalData(id, alg), der)
	clear(der)
	if err != nil {
		return domain.SigningKey{}, domain.Internal("signingkeys: seal", err)
	}
	return domain.SigningKey{ID: id, Alg: alg, PublicJWK: public, SealedPrivate: sealed}, nil
}

// publicJWK is the JSON Web Key of a public key: kty and its public members,
// kid, alg and use "sig".
func publicJWK(id domain.SigningKeyID, alg domain.SigningAlgorithm, pub crypto.PublicKey) ([]byte, error) {
	jwk := jose.JSONWebKey{Key: pub, KeyID: string(id), Algorithm: string(alg), Use: "sig"}
	if !jwk.IsPublic() {
		return nil, domain.Internal("signingkeys", fmt.Errorf("key %s: not a public key", id))
	}
	b, err := jwk.MarshalJSON()
	if err != nil {
		return nil, domain.Internal("signingkeys: encode JWK", err)
	}
	return b, nil
}

// Open unseals k's private key.
func (j *JOSE) Open(k domain.SigningKey) (ports.JWSSigner, error) {
	priv, err := j.privateKey(k)
	if err != nil {
		return nil, err
	}
	return &signer{key: k, priv: priv, byType: map[string]jose.Signer{}}, nil
}

func (j *JOSE) privateKey(k domain.SigningKey) (crypto.Signer, error) {
	der, err := j.sealer.open(additionalData(k.ID, k.Alg), k.SealedPrivate)
	if err != nil {
		return nil, domain.Internal("signingkeys: open key "+string(k.ID), err)
	}
	defer clear(der)
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, domain.Internal("signingkeys: parse key "+string(k.ID), err)
	}
	switch priv := parsed.(type) {
	case ed25519.PrivateKey:
		if k.Alg == domain.AlgEdDSA {
			return priv, nil
		}
	case *rsa.PrivateKey:
		if k.Alg == domain.AlgRS256 {
			return priv, nil
		}
	}
	return nil, domain.Internal("signingkeys", fmt.Errorf("key %s: a %T is not an %s key", k.ID, parsed, k.Alg))
}

// signer signs with one private key, keeping a go-jose signer per "typ".
type signer struct {
	key  domain.SigningKey
	priv crypto.Signer

	mu     sync.Mutex
	byType map[string]jose.Signer
}

func (s *signer) Sign(typ string, payload []byte) (string, error) {
	js, err := s.forType(typ)
	if err != nil {
		return "", err
	}
	obj, err := js.Sign(payload)
	if err != nil {
		return "", domain.Internal("signingkeys: sign", err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		return "", domain.Internal("signingkeys: serialize", err)
	}
	return out, nil
}

func (s *signer) forType(typ string) (jose.Signer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if js, ok := s.byType[typ]; ok {
		return js, nil
	}
	js, err := newJOSESigner(s.key, s.priv, typ)
	if err != nil {
		return nil, err
	}
	s.byType[typ] = js
	return js, nil
}

// newJOSESigner signs with priv under k's kid and algorithm; the protected
// header is {alg, kid, typ}.
func newJOSESigner(k domain.SigningKey, priv crypto.Signer, typ string) (jose.Signer, error) {
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	js, err := jose.NewSigner(jose.SigningKey{
		Algorithm: jose.SignatureAlgorithm(k.Alg),
		Key:       jose.JSONWebKey{Key: priv, KeyID: string(k.ID), Algorithm: string(k.Alg)},
	}, opts)
	if err != nil {
		return nil, domain.Internal("signingkeys: signer", err)
	}
	return js, nil
}

// Public parses k's public JWK. A JWK with private members, another kid or
// alg, or a key of the wrong type (or an RSA key under 2048 bits) is refused.
func (j *JOSE) Public(k domain.SigningKey) (ports.JWSVerifier, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(k.PublicJWK); err != nil {
		return nil, domain.Internal("signingkeys: parse JWK of "+string(k.ID), err)
	}
	bad := func(why string) error {
		return domain.Internal("signingkeys", fmt.Errorf("JWK of %s: %s", k.ID, why))
	}
	switch {
	case !jwk.IsPublic():
		return nil, bad("holds private members")
	case jwk.KeyID != string(k.ID) || jwk.Algorithm != string(k.Alg) || jwk.Use != "sig":
		return nil, bad("kid, alg or use does not match")
	}
	switch pub := jwk.Key.(type) {
	case ed25519.PublicKey:
		if k.Alg != domain.AlgEdDSA {
			return nil, bad("an Ed25519 key is not an " + string(k.Alg) + " key")
		}
	case *rsa.PublicKey:
		if k.Alg != domain.AlgRS256 || pub.N.BitLen() < RSABits {
			return nil, bad("not an RSA key of at least 2048 bits for RS256")
		}
	default:
		return nil, bad(fmt.Sprintf("unsupported key type %T", jwk.Key))
	}
	return &verifier{alg: k.Alg, key: jwk.Key}, nil
}

type verifier struct {
	alg domain.SigningAlgorithm
	key crypto.PublicKey
}

func (v *verifier) Verify(token string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(v.alg)})
	if err != nil || len(jws.Signatures) != 1 {
		return nil, errToken
	}
	payload, err := jws.Verify(v.key)
	if err != nil {
		return nil, errToken
	}
	return payload, nil
}

// Header parses the token's protected header, accepting only alg.
func (j *JOSE) Header(token string, alg domain.SigningAlgorithm) (ports.JWSHeader, error) {
	if alg != domain.AlgEdDSA && alg != domain.AlgRS256 {
		return ports.JWSHeader{}, errToken
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)})
	if err != nil || len(jws.Signatures) != 1 {
		return ports.JWSHeader{}, errToken
	}
	h := jws.Signatures[0].Protected
	if h.Algorithm != string(alg) || h.KeyID == "" || h.JSONWebKey != nil {
		return ports.JWSHeader{}, errToken
	}
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	if _, ok := h.ExtraHeaders[jose.HeaderType]; ok && typ == "" {
		return ports.JWSHeader{}, errToken
	}
	return ports.JWSHeader{KeyID: domain.SigningKeyID(h.KeyID), Type: typ}, nil
}
