package auth

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth/paseto"
)

func TestEnvdTokenRoundTrip(t *testing.T) {
	k := paseto.NewKey()
	tok := SealEnvd(k, EnvdClaims{RuntimeID: "rt-1", Credential: "key:k1"})
	c, err := OpenEnvd(k, tok, "rt-1")
	if err != nil || c.Credential != "key:k1" {
		t.Fatalf("OpenEnvd = %+v, %v", c, err)
	}
	if _, err := OpenEnvd(k, tok, "rt-2"); err == nil {
		t.Error("a token opened for another runtime")
	}
	if _, err := OpenEnvd(paseto.NewKey(), tok, "rt-1"); err == nil {
		t.Error("a token opened under another key")
	}
	// Neither kind of token opens as the other.
	pv := SealPreview(k, PreviewClaims{RuntimeID: "rt-1", Port: 80, Expires: time.Now().Add(time.Hour), Credential: "key:k1"})
	if _, err := OpenEnvd(k, pv, "rt-1"); err == nil {
		t.Error("a preview token opened as an envd token")
	}
	if _, err := OpenPreview(k, tok, "rt-1", 80, time.Now()); err == nil {
		t.Error("an envd token opened as a preview token")
	}
}
