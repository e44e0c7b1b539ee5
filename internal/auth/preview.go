package auth

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/auth/paseto"
)

// Preview tokens let a browser reach one port of one runtime's sandbox
// without an API key: a link, a tab, an iframe. They are PASETO v4.local
// tokens sealed with the session key under an implicit assertion of their
// own, so neither kind of token opens as the other.

var previewAssertion = []byte("paddock preview v1")

// MaxPreviewTTL bounds how long a preview token lives.
const MaxPreviewTTL = 24 * time.Hour

// PreviewClaims are what a preview token grants.
type PreviewClaims struct {
	RuntimeID string    `json:"rt"`
	Port      int       `json:"port"`
	Expires   time.Time `json:"exp"`
	// Credential made it ("key:<id>", "session:<id>").
	Credential string `json:"by"`
}

// ErrBadPreviewToken is every refusal of a preview token.
var ErrBadPreviewToken = errors.New("the preview token is malformed, expired, or for another runtime or port")

// SealPreview makes a preview token.
func SealPreview(key paseto.Key, c PreviewClaims) string {
	b, _ := json.Marshal(c) // plain struct: cannot fail
	return paseto.Encrypt(key, b, nil, previewAssertion)
}

// OpenPreview checks a preview token for runtimeID and port at now.
func OpenPreview(key paseto.Key, token, runtimeID string, port int, now time.Time) (PreviewClaims, error) {
	var c PreviewClaims
	payload, footer, err := paseto.Decrypt(key, token, previewAssertion)
	if err != nil || len(footer) != 0 || json.Unmarshal(payload, &c) != nil {
		return c, ErrBadPreviewToken
	}
	if c.RuntimeID != runtimeID || c.Port != port || !now.Before(c.Expires) {
		return c, ErrBadPreviewToken
	}
	return c, nil
}
