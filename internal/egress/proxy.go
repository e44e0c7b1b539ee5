package egress

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Identity is who a proxied request comes from: one sandbox of one
// runtime.
type Identity struct {
	OrgID       string
	WorkspaceID string
	RuntimeID   string
	SandboxID   string
	// SecretIDs are the secrets the sandbox was started with: Brokers is
	// asked only when there are some.
	SecretIDs []string
}

// Decision is what the proxy did with one request or tunnel, recorded when
// it ends.
type Decision struct {
	Identity
	At        time.Time
	Allowed   bool
	Reason    string
	Refusal   Refusal // why nothing went through; RefusalNone when allowed
	Method    string  // CONNECT, or the method of a proxied HTTP request
	Host      string
	Port      int
	Addr      string // the address dialed; "" when refused before dialing
	BytesUp   int64  // from the sandbox
	BytesDown int64  // to the sandbox
	Duration  time.Duration
	Brokered  bool // a brokered secret was put into it
}

// Resolver looks names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config wires a Proxy.
type Config struct {
	// Authenticate maps the proxy credentials a sandbox sends, from the
	// address it connects from, to who it is; an error answers 407.
	Authenticate func(ctx context.Context, user, pass string, from netip.Addr) (Identity, error)
	// Policy returns the rules for id, read at every request so that a
	// changed policy applies at once.
	Policy func(ctx context.Context, id Identity) (Policy, error)
	// Brokers returns the brokered secrets id may send to host (only
	// those need their values opened); nil: none.
	Brokers func(ctx context.Context, id Identity, host string) ([]Brokered, error)
	// Record receives every decision. It is called on the request's
	// goroutine when the request ends, so it should not block for long.
	Record func(Decision)
	// Hosts maps names to addresses before any lookup. The operator
	// configures it, so each address is opened for its name on its port
	// (port 0: on 80 and 443), even private or loopback; the guard
	// closes its other ports as any address's. Deny rules still apply.
	Hosts map[string][]netip.AddrPort
	// Resolver resolves other names; nil means the system's.
	Resolver Resolver
	// Guard closes internal addresses whatever the rules say; nil: a
	// Guard that opens none.
	Guard *Guard
	// CA signs the certificates the proxy shows for brokered hosts; nil
	// disables brokering.
	CA *CA
	// UpstreamRoots verify the servers the proxy calls when it brokers;
	// nil means the system's roots.
	UpstreamRoots *x509.CertPool
	// BrokerPorts are the ports on which tunnels to brokered hosts are
	// intercepted; nil means 443 only.
	BrokerPorts []int
	// DialTimeout bounds each upstream dial; 0 means 10 s.
	DialTimeout time.Duration
	Logger      *slog.Logger
	Now         func() time.Time
}

// Proxy is the egress proxy: an HTTP proxy (absolute-URI requests and
// CONNECT) that only forwards what a runtime's rules allow.
type Proxy struct {
	cfg      Config
	srv      *http.Server
	upstream *http.Transport
	leaves   *leafCache

	mu     sync.Mutex
	tunnel map[net.Conn]struct{}
	closed atomic.Bool
}

// New returns a Proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Authenticate == nil || cfg.Policy == nil {
		return nil, errors.New("egress: Config.Authenticate and Config.Policy are required")
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BrokerPorts == nil {
		cfg.BrokerPorts = []int{443}
	}
	if cfg.Record == nil {
		cfg.Record = func(Decision) {}
	}
	if cfg.Guard == nil {
		cfg.Guard = NewGuard(GuardConfig{})
	}
	p := &Proxy{cfg: cfg, tunnel: map[net.Conn]struct{}{}}
	if cfg.CA != nil {
		p.leaves = newLeafCache(cfg.CA)
	}
	p.upstream = &http.Transport{
		// Each request dials the address its check pinned (see dialPinned);
		// a pooled connection could carry one sandbox's request to an
		// address checked for another.
		DisableKeepAlives:     true,
		DialContext:           p.dialPinned,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
		Proxy:                 nil,
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	return p, nil
}

// Serve serves l until Close.
func (p *Proxy) Serve(l net.Listener) error {
	err := p.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving and ends every open tunnel.
func (p *Proxy) Close() error {
	p.closed.Store(true)
	err := p.srv.Close()
	p.mu.Lock()
	for c := range p.tunnel {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.upstream.CloseIdleConnections()
	return err
}

// Refusal header: set on every answer the proxy refuses itself, so a
// client can tell the proxy's 403 from an upstream's.
const (
	headerRefused = "X-Paddock-Egress"
	refusedValue  = "denied"
)

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := p.cfg.Now()
	id, ok := p.authenticate(r)
	if !ok {
		w.Header().Set("Proxy-Authenticate", `Basic realm="paddock"`)
		http.Error(w, "paddock egress proxy: proxy credentials required (use HTTP_PROXY as set in the sandbox)", http.StatusProxyAuthRequired)
		return
	}
	d := Decision{Identity: id, Method: r.Method}
	defer func() {
		d.At = p.cfg.Now()
		d.Duration = d.At.Sub(start)
		p.cfg.Record(d)
	}()
	if r.Method == http.MethodConnect {
		p.connect(w, r, &d)
		return
	}
	p.forward(w, r, &d)
}

// authenticate reads Basic proxy credentials.
func (p *Proxy) authenticate(r *http.Request) (Identity, bool) {
	h := r.Header.Get("Proxy-Authorization")
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return Identity{}, false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return Identity{}, false
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return Identity{}, false
	}
	from, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return Identity{}, false
	}
	id, err := p.cfg.Authenticate(r.Context(), user, pass, from.Addr().Unmap())
	if err != nil {
		return Identity{}, false
	}
	return id, true
}

// refuse answers a refused request and records why.
func refuse(w http.ResponseWriter, d *Decision, status int, v Verdict) {
	d.Allowed = false
	d.Reason, d.Refusal = v.Reason, v.Refusal
	w.Header().Set(headerRefused, refusedValue)
	http.Error(w, "paddock egress proxy: "+v.Reason, status)
}

// target is a checked destination: the address to dial.
type target struct {
	host string
	port int
	addr netip.AddrPort
	// opened: the installation's host map named the address on this
	// port, so the guard lets it through.
	opened bool
}

// check resolves host and applies id's policy; it returns the address to
// dial or an HTTP status and the verdict refusing it.
func (p *Proxy) check(ctx context.Context, id Identity, host string, port int) (target, int, Verdict) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || port < 1 || port > 65535 {
		return target{}, http.StatusBadRequest, Verdict{Reason: "malformed destination", Refusal: RefusalMalformed}
	}
	pol, err := p.cfg.Policy(ctx, id)
	if err != nil {
		p.cfg.Logger.Warn("egress policy lookup failed", "runtime", id.RuntimeID, "err", err)
		return target{}, http.StatusServiceUnavailable, Verdict{Reason: "the policy could not be read; try again", Refusal: RefusalUnavailable}
	}
	if a, ok := parseAddr(host); ok {
		// Every encoding of an address (2130706433, 0x7f.1, 127.1) is
		// that address, for the rules and the guard alike.
		host = a.String()
	}
	var byName *Verdict
	if !isAddr(host) {
		allowed, v, done := pol.decideName(host, port)
		if done {
			return target{}, http.StatusForbidden, v
		}
		if allowed {
			byName = &v
		}
	}
	addrs, mapped, err := p.resolve(ctx, host)
	if err != nil {
		if byName == nil {
			// Nothing allows the name: say so rather than whether it
			// exists.
			return target{}, http.StatusForbidden, Verdict{Reason: "no allow rule matches", Refusal: RefusalNotAllowed}
		}
		return target{}, http.StatusBadGateway, Verdict{Reason: "cannot resolve " + host, Refusal: RefusalUnresolved}
	}
	var last Verdict
	for _, a := range addrs {
		a = a.Unmap()
		opened := opens(mapped, a, port)
		v := pol.decide(a, port, byName, opened, p.cfg.Guard)
		if v.Allowed {
			return target{host: host, port: port, addr: netip.AddrPortFrom(a, uint16(port)), opened: opened}, 0, v
		}
		last = v
	}
	return target{}, http.StatusForbidden, last
}

func isAddr(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}

// resolve returns host's addresses: the operator's host map first (with
// the ports it opens them on, mapped), then a lookup.
func (p *Proxy) resolve(ctx context.Context, host string) (addrs []netip.Addr, mapped []netip.AddrPort, err error) {
	if m := p.cfg.Hosts[host]; len(m) > 0 {
		for _, ap := range m {
			if !slices.Contains(addrs, ap.Addr()) {
				addrs = append(addrs, ap.Addr())
			}
		}
		return addrs, m, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	addrs, err = p.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("no addresses for %s", host)
	}
	return addrs, nil, err
}

// opens reports whether the host map entries mapped open address a on
// port: an entry's own port, or 80 and 443 for an entry without one.
func opens(mapped []netip.AddrPort, a netip.Addr, port int) bool {
	for _, ap := range mapped {
		if ap.Addr().Unmap() == a && (int(ap.Port()) == port || ap.Port() == 0 && webPort(port)) {
			return true
		}
	}
	return false
}

// errGuarded is a dial the guard stopped.
var errGuarded = errors.New("egress: the guard refuses this address")

// dialer dials t's address and nothing else the guard closes: it checks
// the address of the socket itself, as it connects, so no lookup between
// the check and the dial can change what is reached.
func (p *Proxy) dialer(t target) *net.Dialer {
	return &net.Dialer{
		Timeout: p.cfg.DialTimeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || ap != t.addr {
				return errGuarded
			}
			if !t.opened && p.cfg.Guard.Closed(ap.Addr()) != "" {
				return errGuarded
			}
			return nil
		},
	}
}

// pinnedKey carries the checked address to dialPinned.
type pinnedKey struct{}

func (p *Proxy) dialPinned(ctx context.Context, network, _ string) (net.Conn, error) {
	t, ok := ctx.Value(pinnedKey{}).(target)
	if !ok {
		return nil, errors.New("egress: no checked address for this request")
	}
	return p.dialer(t).DialContext(ctx, network, t.addr.String())
}

// hostPort splits an authority, defaulting the port.
func hostPort(authority string, defPort int) (string, int, bool) {
	host, ps, err := net.SplitHostPort(authority)
	if err != nil {
		if strings.Contains(strings.Trim(authority, "[]"), ":") && !strings.HasPrefix(authority, "[") {
			return "", 0, false
		}
		return strings.Trim(authority, "[]"), defPort, authority != ""
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, false
	}
	return host, port, host != ""
}

// hopHeaders are connection-level headers a proxy never forwards.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func stripHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// admit reads a request's destination (hostport, with defaultPort when it
// names none; 0: a port is required) and checks it against the rules and
// the guard. A refusal is answered and recorded in d; an admitted target
// is recorded as allowed.
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, d *Decision, hostport string, defaultPort int, malformed string) (target, bool) {
	host, port, ok := hostPort(hostport, defaultPort)
	d.Host, d.Port = host, port
	if !ok || port == 0 {
		refuse(w, d, http.StatusBadRequest, Verdict{Reason: malformed, Refusal: RefusalMalformed})
		return target{}, false
	}
	t, status, v := p.check(r.Context(), d.Identity, host, port)
	if status != 0 {
		refuse(w, d, status, v)
		return target{}, false
	}
	d.Allowed, d.Reason, d.Host = true, v.Reason, t.host
	return t, true
}

// forward proxies one absolute-URI HTTP request.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, d *Decision) {
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		refuse(w, d, http.StatusBadRequest, Verdict{Reason: "only absolute http:// URLs and CONNECT are proxied", Refusal: RefusalMalformed})
		return
	}
	t, ok := p.admit(w, r, d, r.URL.Host, 80, "malformed destination")
	if !ok {
		return
	}
	d.Addr = t.addr.String()
	body := &counter{r: r.Body}
	out := r.Clone(context.WithValue(r.Context(), pinnedKey{}, t))
	out.RequestURI = ""
	out.Body = body
	if r.ContentLength == 0 {
		out.Body = nil
	}
	stripHop(out.Header)
	res, err := p.upstream.RoundTrip(out)
	d.BytesUp = body.n.Load()
	if err != nil {
		d.Allowed, d.Reason, d.Refusal = false, "upstream failed: "+errorClass(err), RefusalUpstream
		w.Header().Set(headerRefused, "upstream-failed")
		http.Error(w, "paddock egress proxy: "+d.Reason, http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	stripHop(res.Header)
	for k, vs := range res.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(res.StatusCode)
	n, _ := io.Copy(w, res.Body)
	d.BytesDown = n
	d.BytesUp = body.n.Load()
}

// errorClass describes an upstream failure without its details (which may
// carry addresses of the host).
func errorClass(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, errGuarded):
		return "the guard refused the address dialled"
	}
	return "connection failed"
}

// connect opens a tunnel: for HTTPS, and for plain TCP to a host:port a
// rule allows. Brokered hosts are intercepted instead (see broker.go).
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, d *Decision) {
	t, ok := p.admit(w, r, d, r.Host, 0, "CONNECT needs host:port")
	if !ok {
		return
	}
	brokers := p.brokersFor(r.Context(), d.Identity, t)
	var up net.Conn
	if len(brokers) == 0 {
		c, err := p.dialer(t).DialContext(r.Context(), "tcp", t.addr.String())
		if err != nil {
			d.Allowed, d.Reason, d.Refusal = false, "upstream failed: "+errorClass(err), RefusalUpstream
			w.Header().Set(headerRefused, "upstream-failed")
			http.Error(w, "paddock egress proxy: "+d.Reason, http.StatusBadGateway)
			return
		}
		up = c
		d.Addr = t.addr.String()
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		refuse(w, d, http.StatusInternalServerError, Verdict{Reason: "tunnels are not supported here", Refusal: RefusalProxy})
		return
	}
	w.WriteHeader(http.StatusOK)
	down, rw, err := hj.Hijack()
	if err != nil {
		if up != nil {
			_ = up.Close()
		}
		return
	}
	if !p.track(down) {
		_ = down.Close()
		return
	}
	defer p.untrack(down)
	// Bytes the client sent after its CONNECT are buffered in rw.
	client := &bufferedConn{Conn: down, r: rw.Reader}
	if len(brokers) > 0 {
		d.Brokered = true
		p.intercept(r.Context(), client, t, brokers, d)
		return
	}
	p.splice(client, up, d)
}

// splice copies both ways until both sides are done.
func (p *Proxy) splice(down net.Conn, up net.Conn, d *Decision) {
	defer up.Close()
	defer down.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n, _ := io.Copy(up, down)
		d.BytesUp = n
		closeWrite(up)
	}()
	n, _ := io.Copy(down, up)
	d.BytesDown = n
	closeWrite(down)
	wg.Wait()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return false
	}
	p.tunnel[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnel, c)
	p.mu.Unlock()
}

// bufferedConn reads what the server had already buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// counter counts the bytes read through it.
type counter struct {
	r io.ReadCloser
	n atomic.Int64
}

func (c *counter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

func (c *counter) Close() error { return c.r.Close() }
