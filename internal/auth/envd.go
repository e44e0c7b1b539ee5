package auth

import (
	"encoding/json"
	"errors"

	"github.com/paddockhq/paddock/internal/auth/paseto"
)

// Envd access tokens are what the E2B-compatible surface hands an e2b
// SDK for one sandbox (the answer's envdAccessToken): the SDK sends it to
// envd as X-Access-Token. Like a preview token it is PASETO v4.local,
// sealed with the session key under an implicit assertion of its own, so
// no other kind of token opens as one, and it names the credential that
// asked for it, which must still hold (and still reach the runtime) on
// every use. It has no expiry of its own: it lives as long as its maker's
// credential and the runtime.

var envdAssertion = []byte("paddock e2b envd v1")

// EnvdClaims are what an envd access token grants.
type EnvdClaims struct {
	RuntimeID string `json:"rt"`
	// Credential made it ("key:<id>", "session:<id>").
	Credential string `json:"by"`
}

// ErrBadEnvdToken is every refusal of an envd access token.
var ErrBadEnvdToken = errors.New("the access token is malformed or for another sandbox")

// SealEnvd makes an envd access token.
func SealEnvd(key paseto.Key, c EnvdClaims) string {
	b, _ := json.Marshal(c) // plain struct: cannot fail
	return paseto.Encrypt(key, b, nil, envdAssertion)
}

// OpenEnvd checks an envd access token for runtimeID.
func OpenEnvd(key paseto.Key, token, runtimeID string) (EnvdClaims, error) {
	var c EnvdClaims
	payload, footer, err := paseto.Decrypt(key, token, envdAssertion)
	if err != nil || len(footer) != 0 || json.Unmarshal(payload, &c) != nil {
		return c, ErrBadEnvdToken
	}
	if c.RuntimeID != runtimeID || c.Credential == "" {
		return c, ErrBadEnvdToken
	}
	return c, nil
}
