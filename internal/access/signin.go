package access

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// SignIn is what the service offers with wallet sign-in (auth.SignIn): a
// challenge, a signed answer that opens a session, signing out, and
// preview tokens sealed with the sign-in's key. Only UseSignIn makes one,
// so a server without sign-in has none of these to reach.
type SignIn struct {
	s  *Service
	si *auth.SignIn
}

// UseSignIn makes si the service's wallet sign-in (the session tokens
// Authenticate verifies, the key preview tokens are sealed and opened
// with) and returns what it offers. Call it before the service is
// shared.
func (s *Service) UseSignIn(si *auth.SignIn) *SignIn {
	s.signin = si
	return &SignIn{s: s, si: si}
}

// Challenge starts a wallet sign-in for address.
func (w *SignIn) Challenge(ctx context.Context, address string) (store.AuthChallenge, error) {
	return w.si.Challenge(ctx, address)
}

// OpenSession answers a challenge with its signature and opens a session;
// it returns the session token, shown once.
func (w *SignIn) OpenSession(ctx context.Context, nonce, signature string) (string, store.AuthSession, store.User, error) {
	if nonce == "" || len(nonce) > 64 {
		return "", store.AuthSession{}, store.User{}, errdefs.InvalidArgument("invalid_nonce", "nonce is the one a challenge gave")
	}
	return w.si.Session(ctx, nonce, signature)
}

// SignOut ends p's session: the console session it came through, or its
// wallet session.
func (w *SignIn) SignOut(ctx context.Context, p Principal) error {
	id := p.SessionID
	if p.Console != "" {
		id = p.Console
	}
	if id == "" {
		return errdefs.InvalidArgument("not_a_session", "sign out with the session token itself; revoke an API key with DELETE …/keys/{key_id}")
	}
	return w.si.Revoke(ctx, id)
}

// KeySession verifies an API key (Service.VerifyKey: refused as a bearer
// key would be) and opens a console session that acts as it: re-checked
// on every request, it dies when the key is revoked or expires and never
// carries more than the key. It returns the session's token, for the
// console's cookie only, and the principal, with the session.
func (w *SignIn) KeySession(ctx context.Context, key string) (string, store.AuthSession, Principal, error) {
	p, err := w.s.VerifyKey(ctx, key)
	if err != nil {
		return "", store.AuthSession{}, Principal{}, err
	}
	rec, err := w.s.store.GetAPIKey(ctx, p.KeyID)
	if err != nil {
		return "", store.AuthSession{}, Principal{}, err
	}
	token, sess, err := w.si.KeySession(ctx, p.KeyID, p.UserID, rec.ExpiresAt)
	if err != nil {
		return "", store.AuthSession{}, Principal{}, err
	}
	p.Console = sess.ID
	return token, sess, p, nil
}

// Session returns the session id names, as stored (its expiry, whether
// it was revoked), for the console to answer with.
func (w *SignIn) Session(ctx context.Context, id string) (store.AuthSession, error) {
	return w.s.store.GetAuthSession(ctx, id)
}

// CSRFToken is the CSRF token of the console session id
// (auth.SignIn.CSRFToken).
func (w *SignIn) CSRFToken(id string) string { return w.si.CSRFToken(id) }

// ValidCSRF reports whether token is the CSRF token of the console
// session id, compared in constant time.
func (w *SignIn) ValidCSRF(id, token string) bool { return w.si.ValidCSRF(id, token) }

// PreviewTTL reads how long a preview token asked for lives: ttl is a
// duration of at most auth.MaxPreviewTTL, "" for DefaultPreviewTTL.
func (w *SignIn) PreviewTTL(ttl string) (time.Duration, error) {
	if ttl == "" {
		return DefaultPreviewTTL, nil
	}
	d, err := time.ParseDuration(ttl)
	if err != nil || d <= 0 || d > auth.MaxPreviewTTL {
		return 0, errdefs.InvalidArgument("invalid_ttl", "ttl %q must be a positive duration of at most %s", ttl, auth.MaxPreviewTTL)
	}
	return d, nil
}

// IssuePreviewToken seals a token that lets a browser reach port of rt
// for ttl (PreviewTTL) as p: it lives no longer than p's credential and
// access (Service.PreviewToken), nor than the console session p came
// through.
func (w *SignIn) IssuePreviewToken(p Principal, rt store.Runtime, port int, ttl time.Duration) (string, time.Time) {
	exp := w.s.now().Add(ttl)
	return auth.SealPreview(w.si.Key, auth.PreviewClaims{RuntimeID: rt.ID, Port: port, Expires: exp, Credential: p.Presented()}), exp
}
