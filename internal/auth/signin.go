package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth/paseto"
	"github.com/paddockhq/paddock/internal/auth/wallet"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
)

// SessionPrefix starts every session token (PASETO v4.local).
const SessionPrefix = "v4.local."

// ConsoleCookie is the web console's cookie: it carries a console
// session's token (HttpOnly, so no script reads it). The preview gateway
// keeps it from the apps it serves.
const ConsoleCookie = "paddock_console"

// Sign-in defaults.
const (
	DefaultChallengeTTL = 5 * time.Minute
	DefaultSessionTTL   = 24 * time.Hour
)

// sessionAssertion is the implicit assertion every session token is
// sealed with: a token sealed under the same key for anything else does
// not open as a session.
var sessionAssertion = []byte("paddock session v1")

// SignInStore is what SignIn uses of the store: challenges, the user a
// wallet names, and sessions.
type SignInStore interface {
	CreateAuthChallenge(ctx context.Context, c store.AuthChallenge) error
	GetAuthChallenge(ctx context.Context, nonce string) (store.AuthChallenge, error)
	ConsumeAuthChallenge(ctx context.Context, nonce string, at time.Time) error
	GetUserByWallet(ctx context.Context, wallet string) (store.User, error)
	CreateAuthSession(ctx context.Context, s store.AuthSession) error
	GetAuthSession(ctx context.Context, id string) (store.AuthSession, error)
	RevokeAuthSession(ctx context.Context, id string, at time.Time) error
}

// SignIn is wallet sign-in: an EIP-191 challenge-response that issues
// PASETO v4.local session tokens.
//
//  1. Challenge: the caller names an address and gets a single-use nonce
//     and the message to sign with it (personal_sign).
//  2. Session: the caller sends the nonce and the signature. The signer is
//     recovered from the signature (secp256k1, Keccak-256) and must be the
//     address the challenge named; the nonce is consumed (exactly once,
//     even under concurrent attempts), and a session is opened for the
//     user who owns the address.
//  3. The token is sealed (v4.local: XChaCha20 and BLAKE2b-MAC) with the
//     server's key and names the session; the session's row decides
//     whether it is still good, so DELETE revokes it at once.
type SignIn struct {
	Store SignInStore
	Key   paseto.Key
	Now   func() time.Time
	// Domain names this server in the message ("host:port"), as its
	// users reach it: a wallet shows it, and a client checks it before
	// signing. It is configured, never taken from a request, so a site
	// that relays a challenge cannot pass for this server.
	Domain       string
	ChallengeTTL time.Duration
	SessionTTL   time.Duration
}

// Validate reports what a SignIn lacks: a store, a clock and a domain.
// Its maker calls it once, at startup; a SignIn in use has them all.
func (s SignIn) Validate() error {
	var missing []string
	if s.Store == nil {
		missing = append(missing, "a store")
	}
	if s.Now == nil {
		missing = append(missing, "a clock")
	}
	if s.Domain == "" {
		missing = append(missing, "a domain")
	}
	if len(missing) > 0 {
		return fmt.Errorf("auth: sign-in needs %s", strings.Join(missing, ", "))
	}
	return nil
}

func (s SignIn) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

func (s SignIn) challengeTTL() time.Duration {
	if s.ChallengeTTL > 0 {
		return s.ChallengeTTL
	}
	return DefaultChallengeTTL
}

func (s SignIn) sessionTTL() time.Duration {
	if s.SessionTTL > 0 {
		return s.SessionTTL
	}
	return DefaultSessionTTL
}

// Challenge issues a nonce for address. It does not say whether a user
// owns the address.
func (s SignIn) Challenge(ctx context.Context, address string) (store.AuthChallenge, error) {
	addr, err := wallet.ParseAddress(address)
	if err != nil {
		return store.AuthChallenge{}, errdefs.InvalidArgument("invalid_wallet_address", "%v", err)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	now := s.now()
	c := store.AuthChallenge{
		Nonce:     hex.EncodeToString(b),
		Wallet:    addr.Lower(),
		CreatedAt: now,
		ExpiresAt: now.Add(s.challengeTTL()),
	}
	c.Message = ChallengeMessage(s.Domain, addr, c.Nonce, c.CreatedAt, c.ExpiresAt)
	if err := s.Store.CreateAuthChallenge(ctx, c); err != nil {
		return store.AuthChallenge{}, err
	}
	return c, nil
}

// ChallengeMessage is the text a wallet signs: shaped like a Sign-In with
// Ethereum (EIP-4361) message, so wallets show it as a sign-in.
func ChallengeMessage(domain string, addr wallet.Address, nonce string, issued, expires time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s wants you to sign in to paddock with your Ethereum account:\n%s\n\n", domain, addr)
	fmt.Fprintf(&b, "Nonce: %s\nIssued At: %s\nExpiration Time: %s", nonce, issued.Format(time.RFC3339), expires.Format(time.RFC3339))
	return b.String()
}

// Refusals of a sign-in.
var (
	errBadChallenge = errdefs.Unauthenticated("invalid_challenge", "the nonce is unknown or was used already: ask for a new challenge")
	errExpired      = errdefs.Unauthenticated("challenge_expired", "the challenge expired: ask for a new one")
	errWrongSigner  = errdefs.Unauthenticated("wrong_signer", "the signature is not by the address the challenge names")
	errNoUser       = errdefs.Unauthenticated("unknown_wallet", "no user has this wallet address; an org admin adds it as a member first")
)

// sessionClaims are what a session token carries.
type sessionClaims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"` // user id
	SessionID string `json:"jti"`
	IssuedAt  string `json:"iat"`
	Expires   string `json:"exp"`
}

// Session checks a signed challenge and opens a session for the user who
// owns its address. It returns the token, shown once.
func (s SignIn) Session(ctx context.Context, nonce, signature string) (string, store.AuthSession, store.User, error) {
	var none store.AuthSession
	c, err := s.Store.GetAuthChallenge(ctx, nonce)
	if errdefs.IsNotFound(err) {
		return "", none, store.User{}, errBadChallenge
	}
	if err != nil {
		return "", none, store.User{}, err
	}
	now := s.now()
	if !now.Before(c.ExpiresAt) {
		return "", none, store.User{}, errExpired
	}
	sig, err := wallet.ParseSignature(signature)
	if err != nil {
		return "", none, store.User{}, errdefs.InvalidArgument("invalid_signature", "%v", err)
	}
	want, err := wallet.ParseAddress(c.Wallet)
	if err != nil {
		return "", none, store.User{}, fmt.Errorf("stored challenge address: %w", err)
	}
	if err := wallet.Verify([]byte(c.Message), sig, want); err != nil {
		if errors.Is(err, wallet.ErrWrongSigner) {
			return "", none, store.User{}, errWrongSigner
		}
		return "", none, store.User{}, errdefs.InvalidArgument("invalid_signature", "%v", err)
	}
	if err := s.Store.ConsumeAuthChallenge(ctx, nonce, now); err != nil {
		if errdefs.IsNotFound(err) {
			return "", none, store.User{}, errBadChallenge
		}
		return "", none, store.User{}, err
	}
	u, err := s.Store.GetUserByWallet(ctx, c.Wallet)
	if errdefs.IsNotFound(err) {
		return "", none, store.User{}, errNoUser
	}
	if err != nil {
		return "", none, store.User{}, err
	}
	token, sess, err := s.open(ctx, store.AuthSession{UserID: u.ID})
	return token, sess, u, err
}

// KeySession opens a console session for an API key the caller has
// verified: it names the key (keyID) and its holder (userID, "" for an
// installation-wide key), and acts as the key, re-checked on every
// request. It returns the token, which only the session's cookie carries.
// It ends no later than until, the key's expiry (zero: none).
func (s SignIn) KeySession(ctx context.Context, keyID, userID string, until time.Time) (string, store.AuthSession, error) {
	return s.open(ctx, store.AuthSession{UserID: userID, KeyID: keyID, ExpiresAt: until})
}

// open stores sess, given its id and times now, and seals its token. It
// lives the session TTL, or until sess.ExpiresAt when that is sooner.
func (s SignIn) open(ctx context.Context, sess store.AuthSession) (string, store.AuthSession, error) {
	now := s.now()
	until := now.Add(s.sessionTTL())
	if !sess.ExpiresAt.IsZero() && sess.ExpiresAt.Before(until) {
		until = sess.ExpiresAt
	}
	sess.ID, sess.CreatedAt, sess.ExpiresAt = uuid.NewString(), now, until
	if err := s.Store.CreateAuthSession(ctx, sess); err != nil {
		return "", store.AuthSession{}, err
	}
	payload, err := json.Marshal(sessionClaims{
		Issuer:    "paddock",
		Subject:   sess.UserID,
		SessionID: sess.ID,
		IssuedAt:  sess.CreatedAt.Format(time.RFC3339),
		Expires:   sess.ExpiresAt.Format(time.RFC3339),
	})
	if err != nil {
		return "", store.AuthSession{}, err
	}
	return paseto.Encrypt(s.Key, payload, nil, sessionAssertion), sess, nil
}

// csrfAssertion separates the console's CSRF tokens from every other use
// of the session key.
const csrfAssertion = "paddock console csrf v1\x00"

// CSRFToken is the token a console session's unsafe requests carry in
// X-CSRF-Token: an HMAC-SHA256 of the session's id under the session key,
// so the server keeps nothing more, and a page that cannot read the
// session's answers (another origin) cannot know it.
func (s SignIn) CSRFToken(sessionID string) string {
	m := hmac.New(sha256.New, s.Key[:])
	m.Write([]byte(csrfAssertion + sessionID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// ValidCSRF reports whether token is the CSRF token of sessionID,
// compared in constant time.
func (s SignIn) ValidCSRF(sessionID, token string) bool {
	return token != "" && hmac.Equal([]byte(token), []byte(s.CSRFToken(sessionID)))
}

// RefuseSession returns the public error for a session token wrapping why.
func RefuseSession(reason string) error {
	return errBadSession.WithCause(&Refusal{Reason: reason})
}

// Verify returns the identity a session token carries: refused when it
// does not open under the key, or its session expired, was revoked or is
// gone with its user.
func (s SignIn) Verify(ctx context.Context, token string) (Identity, error) {
	payload, footer, err := paseto.Decrypt(s.Key, token, sessionAssertion)
	if err != nil || len(footer) != 0 {
		return Identity{}, RefuseSession("malformed")
	}
	var c sessionClaims
	if err := json.Unmarshal(payload, &c); err != nil || c.SessionID == "" || c.Issuer != "paddock" {
		return Identity{}, RefuseSession("malformed")
	}
	sess, err := s.Store.GetAuthSession(ctx, c.SessionID)
	if errdefs.IsNotFound(err) {
		return Identity{}, RefuseSession("unknown")
	}
	if err != nil {
		return Identity{}, err
	}
	if sess.UserID != c.Subject {
		return Identity{}, RefuseSession("unknown")
	}
	return CheckSession(sess, s.Now())
}

// CheckSession returns the identity a stored session carries at now:
// refused when it was revoked or has expired. A console session opened
// with a key returns only the key's id (KeyID) and the session (Console):
// what the key may do is its verifier's to say, as for the key itself.
func CheckSession(sess store.AuthSession, now time.Time) (Identity, error) {
	switch {
	case !sess.RevokedAt.IsZero():
		return Identity{}, RefuseSession("revoked")
	case !now.Before(sess.ExpiresAt):
		return Identity{}, RefuseSession("expired")
	}
	if sess.KeyID != "" {
		// A console session opened with a key is that key, which its
		// verifier checks again (internal/access).
		return Identity{KeyID: sess.KeyID, UserID: sess.UserID, Console: sess.ID}, nil
	}
	return Identity{SessionID: sess.ID, UserID: sess.UserID}, nil
}

// Revoke ends the session id.
func (s SignIn) Revoke(ctx context.Context, id string) error {
	return s.Store.RevokeAuthSession(ctx, id, s.now())
}

// IsSessionToken reports whether a bearer credential is a session token
// rather than an API key.
func IsSessionToken(cred string) bool { return strings.HasPrefix(cred, SessionPrefix) }

// SessionKeyFile is the session token key's file in the data directory.
const SessionKeyFile = "session.key"

// LoadSessionKey returns the key session tokens are sealed with: envKey
// (base64 of 32 bytes, PADDOCK_SESSION_KEY) when set, else
// dataDir/session.key, made on first start. A new key ends every session.
func LoadSessionKey(dataDir, envKey string) (paseto.Key, error) {
	var raw []byte
	var err error
	if envKey != "" {
		raw, err = secrets.ParseKey(envKey)
	} else {
		raw, err = secrets.LoadKeyFile(filepath.Join(dataDir, SessionKeyFile))
	}
	if err != nil {
		return paseto.Key{}, fmt.Errorf("session key: %w", err)
	}
	var k paseto.Key
	copy(k[:], raw)
	return k, nil
}
