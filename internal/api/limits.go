package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/clientaddr"
	"github.com/paddockhq/paddock/internal/errdefs"
)

// Limits protect the server from any one caller. Zero fields take the
// defaults below; a negative rate or cap turns that limit off.
type Limits struct {
	// PerKey and PerClient are token buckets: one per credential (an API
	// key or a session), which authenticated calls draw from, and one per
	// client address, which only calls without a credential or with a
	// refused one draw from. A request over its bucket answers 429 with
	// Retry-After.
	PerKey    Rate
	PerClient Rate
	// Concurrent exec streams (foreground execs and attaches) and
	// terminals, per runtime and per user (the key's holder, or the key).
	ExecPerRuntime      int
	ExecPerUser         int
	TerminalsPerRuntime int
	TerminalsPerUser    int
	// MCPPerUser is how many requests to /mcp one user (or key) has in
	// flight at once (mcp.go).
	MCPPerUser int
	// Request bodies: JSON on every route; file uploads (PUT …/files,
	// POST …/files/tar); capability bundles.
	JSONBodyBytes   int64
	UploadBodyBytes int64
	BundleBodyBytes int64
}

// Rate is a token bucket: PerSecond tokens a second, at most Burst.
type Rate struct {
	PerSecond float64
	Burst     int
}

// Defaults for Limits.
var DefaultLimits = Limits{
	PerKey:              Rate{PerSecond: 100, Burst: 500},
	PerClient:           Rate{PerSecond: 200, Burst: 1000},
	ExecPerRuntime:      32,
	ExecPerUser:         64,
	TerminalsPerRuntime: 8,
	TerminalsPerUser:    16,
	MCPPerUser:          8,
	JSONBodyBytes:       1 << 20,
	UploadBodyBytes:     1 << 30,
	BundleBodyBytes:     binding.MaxBundleBytes,
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	l.PerKey = l.PerKey.withDefaults(d.PerKey)
	l.PerClient = l.PerClient.withDefaults(d.PerClient)
	for _, f := range []struct {
		v *int
		d int
	}{
		{&l.ExecPerRuntime, d.ExecPerRuntime}, {&l.ExecPerUser, d.ExecPerUser},
		{&l.TerminalsPerRuntime, d.TerminalsPerRuntime}, {&l.TerminalsPerUser, d.TerminalsPerUser},
		{&l.MCPPerUser, d.MCPPerUser},
	} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	for _, f := range []struct {
		v *int64
		d int64
	}{
		{&l.JSONBodyBytes, d.JSONBodyBytes}, {&l.UploadBodyBytes, d.UploadBodyBytes}, {&l.BundleBodyBytes, d.BundleBodyBytes},
	} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	return l
}

// withDefaults fills a zero rate or burst from d, each on its own; a
// negative rate is off.
func (r Rate) withDefaults(d Rate) Rate {
	if r.PerSecond == 0 {
		r.PerSecond = d.PerSecond
	}
	if r.Burst <= 0 {
		r.Burst = d.Burst
	}
	return r
}

// errRateLimited is a 429 that says which limit, with Retry-After set
// on w.
func errRateLimited(w http.ResponseWriter, which string, retry time.Duration) error {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(max(retry, time.Second).Seconds()))))
	return errdefs.ResourceExhausted("rate_limited", "too many requests from this %s; retry after %s", which, retry.Round(time.Millisecond))
}

// clientAddr is the address r came from (no port): the peer, or behind
// a trusted proxy the client it forwarded (clientaddr.Resolver).
func (a *API) clientAddr(r *http.Request) string {
	return a.clients.Of(r)
}

// takeAddress spends a token of the client address's bucket (an IPv6
// client's /64's, clientaddr.Key). Only calls without a credential, or
// whose credential was refused, draw from it: an authenticated call
// draws from its credential's bucket alone (takeCredential), so callers
// behind one proxy do not throttle each other, and guessing keys from
// one address is still bounded.
func (a *API) takeAddress(w http.ResponseWriter, r *http.Request) error {
	return a.take(r.Context(), w, "address", clientaddr.Key(a.clientAddr(r)), a.limits.PerClient)
}

// takeCredential spends a token of the credential's bucket. Sessions share
// their user's bucket: signing in again does not buy more requests.
func (a *API) takeCredential(ctx context.Context, w http.ResponseWriter, id auth.Identity) error {
	bucket := id.Credential()
	if id.SessionID != "" {
		bucket = id.Principal()
	}
	return a.take(ctx, w, "credential", bucket, a.limits.PerKey)
}

// takeToken spends a token of a preview token's own bucket, keyed by a
// hash of it: a shared link or a busy embed draws neither from its
// maker's bucket, which stays the maker's own API calls', nor from the
// address's.
func (a *API) takeToken(w http.ResponseWriter, tok string) error {
	sum := sha256.Sum256([]byte(tok))
	return a.take(context.Background(), w, "preview token", hex.EncodeToString(sum[:]), a.limits.PerKey)
}

// take spends a token of the bucket of which (a credential, an address, a
// preview token) named key, which refills at r: none is drawn when the
// limit is off.
func (a *API) take(ctx context.Context, w http.ResponseWriter, which, key string, r Rate) error {
	if r.PerSecond < 0 {
		return nil
	}
	if ok, retry := a.state.Take(ctx, strings.ReplaceAll(which, " ", "_")+":"+key, r); !ok {
		return errRateLimited(w, which, retry)
	}
	return nil
}

// LimitState keeps the limits' live state: the token buckets, and the
// open sessions counted against caps. An API keeps it in its process
// unless its Config names another: SharedLimits keeps it in a store the
// replicas share, so that a limit of N holds across them, not N on each.
type LimitState interface {
	// Take spends one token of bucket key, which refills at r (a
	// positive rate); when there is none it returns how long until
	// there is.
	Take(ctx context.Context, key string, r Rate) (ok bool, retry time.Duration)
	// Hold counts one more session against every cap of caps, or, when
	// one is full, against none and returns a *CapFull naming the first
	// full one. release gives the place back; call it once.
	Hold(ctx context.Context, caps []Cap) (release func(), err error)
}

// Cap is a limit on open sessions: at most Max of Kind (exec streams
// per runtime, …) with Key (the runtime's id, …).
type Cap struct {
	Kind string
	Key  string
	Max  int
}

// CapFull is LimitState.Hold's refusal: Cap is full with Held sessions.
type CapFull struct {
	Cap  Cap
	Held int
}

func (f *CapFull) Error() string {
	return fmt.Sprintf("%s %s holds %d of %d", f.Cap.Kind, f.Cap.Key, f.Held, f.Cap.Max)
}

// caps counts concurrent sessions of a kind (exec streams, terminals) per
// runtime and per user.
type caps struct {
	kind       string // exec_streams, terminals
	perRuntime int
	perUser    int
	state      LimitState
}

// acquire takes one session for runtime and user, or answers 429 with a
// code naming the cap that is full (too_many_exec_streams_per_runtime,
// …). An empty runtime counts against the user's cap alone (a re-attached
// terminal: its runtime's place is the agent's to keep). release gives it
// back; call it once.
func (c *caps) acquire(ctx context.Context, runtime, user string) (release func(), err error) {
	var cs []Cap
	if c.perRuntime >= 0 && runtime != "" {
		cs = append(cs, Cap{Kind: c.kind + "_per_runtime", Key: runtime, Max: c.perRuntime})
	}
	if c.perUser >= 0 {
		cs = append(cs, Cap{Kind: c.kind + "_per_user", Key: user, Max: c.perUser})
	}
	if len(cs) == 0 {
		return func() {}, nil
	}
	release, err = c.state.Hold(ctx, cs)
	var full *CapFull
	if !errors.As(err, &full) {
		return release, err
	}
	if full.Cap.Kind == c.kind+"_per_runtime" {
		return nil, errdefs.ResourceExhausted("too_many_"+full.Cap.Kind, "this runtime has %d open %s, its most; close one first", full.Held, c.noun())
	}
	return nil, errdefs.ResourceExhausted("too_many_"+full.Cap.Kind, "you have %d open %s, the most one user may; close one first", full.Held, c.noun())
}

func (c *caps) noun() string {
	switch c.kind {
	case "exec_streams":
		return "exec streams"
	case "mcp_requests":
		return "requests to /mcp in flight"
	}
	return c.kind
}
