package egress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// rig is a proxy on loopback with upstreams it can reach through its host
// map, and the decisions it recorded.
type rig struct {
	t     testing.TB
	proxy *Proxy
	addr  string
	logs  *bytes.Buffer
	ca    *CA

	mu        sync.Mutex
	decisions []Decision
	// recorded gets a value when a decision is recorded (unless it holds
	// one already).
	recorded chan struct{}
	policy   Policy
	brokers  []Brokered
	// brokerCalls counts Config.Brokers calls.
	brokerCalls int
}

const (
	testUser = "sandbox-1"
	testPass = "right"
	// noSecretsUser is a sandbox started without secrets.
	noSecretsUser = "sandbox-2"
)

func newRig(t testing.TB, allow, deny []string, brokerPort int, opts ...func(*Config)) *rig {
	t.Helper()
	r := &rig{t: t, logs: &bytes.Buffer{}, recorded: make(chan struct{}, 1)}
	r.setPolicy(allow, deny)
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r.ca = ca
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, r.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := Config{
		Authenticate: func(_ context.Context, user, pass string, _ netip.Addr) (Identity, error) {
			if user == noSecretsUser && pass == testPass {
				return Identity{OrgID: "org", WorkspaceID: "ws", RuntimeID: "rt-2", SandboxID: user}, nil
			}
			if user != testUser || pass != testPass {
				return Identity{}, errors.New("bad credentials")
			}
			return Identity{OrgID: "org", WorkspaceID: "ws", RuntimeID: "rt-1", SandboxID: user, SecretIDs: []string{"any"}}, nil
		},
		Policy: func(context.Context, Identity) (Policy, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.policy, nil
		},
		Brokers: func(context.Context, Identity, string) ([]Brokered, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.brokerCalls++
			return r.brokers, nil
		},
		Record: func(d Decision) {
			r.mu.Lock()
			r.decisions = append(r.decisions, d)
			r.mu.Unlock()
			select {
			case r.recorded <- struct{}{}:
			default:
			}
		},
		Hosts:       map[string][]netip.AddrPort{},
		CA:          ca,
		BrokerPorts: []int{brokerPort},
		Logger:      logger,
	}
	for _, o := range opts {
		o(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	t.Cleanup(func() { p.Close() })
	r.proxy, r.addr = p, l.Addr().String()
	return r
}

// mapHost maps names to the host's loopback in the proxy's host map, open
// on port only; call it before the first request.
func (r *rig) mapHost(port string, names ...string) {
	for _, name := range names {
		r.proxy.cfg.Hosts[name] = []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(mustAtoi(port)))}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (r *rig) setPolicy(allow, deny []string) {
	pol, err := ParsePolicy(allow, deny)
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.policy = pol
	r.mu.Unlock()
}

// client returns an HTTP client that goes through the proxy, with the
// given credentials and trusting roots.
func (r *rig) client(user, pass string, roots *x509.CertPool) *http.Client {
	u := &url.URL{Scheme: "http", Host: r.addr, User: url.UserPassword(user, pass)}
	return &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(u),
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}, Timeout: 10 * time.Second}
}

// last waits for the proxy to record n decisions and returns the last.
func (r *rig) last(n int) Decision {
	r.t.Helper()
	timeout := time.After(time.Minute)
	for {
		r.mu.Lock()
		if len(r.decisions) >= n {
			d := r.decisions[n-1]
			r.mu.Unlock()
			return d
		}
		r.mu.Unlock()
		select {
		case <-r.recorded:
		case <-timeout:
			r.t.Fatalf("the proxy recorded fewer than %d decisions", n)
		}
	}
}

func portOf(t testing.TB, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestForwardHTTP(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "path=%s auth=%q got=%d", r.URL.Path, r.Header.Get("Proxy-Authorization"), len(body))
	}))
	defer up.Close()
	port := portOf(t, up.URL)
	r := newRig(t, []string{"registry.test:" + port}, nil, 443)
	r.mapHost(port, "registry.test", "plain.test")
	c := r.client(testUser, testPass, nil)

	res, err := c.Post("http://registry.test:"+port+"/simple/", "text/plain", strings.NewReader(strings.Repeat("x", 1000)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != `path=/simple/ auth="" got=1000` {
		t.Fatalf("status %d, body %q (the proxy credentials must not reach the upstream)", res.StatusCode, body)
	}
	d := r.last(1)
	if !d.Allowed || d.Method != "POST" || d.Host != "registry.test" || d.Port != mustAtoi(port) || d.RuntimeID != "rt-1" ||
		d.BytesUp != 1000 || d.BytesDown != int64(len(body)) || d.Addr != "127.0.0.1:"+port || d.Duration <= 0 {
		t.Fatalf("decision = %+v", d)
	}

	// A host no rule allows.
	res, err = c.Get("http://plain.test:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 || res.Header.Get(headerRefused) != refusedValue {
		t.Fatalf("unlisted host: status %d, header %q", res.StatusCode, res.Header.Get(headerRefused))
	}
	if d := r.last(2); d.Allowed || d.Reason != "no allow rule matches" || d.Host != "plain.test" {
		t.Fatalf("refusal decision = %+v", d)
	}
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestProxyCredentials(t *testing.T) {
	r := newRig(t, []string{"*"}, nil, 443)
	for _, c := range []*http.Client{
		r.client(testUser, "wrong", nil),
		{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: r.addr})}},
	} {
		res, err := c.Get("http://registry.test/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusProxyAuthRequired || res.Header.Get("Proxy-Authenticate") == "" {
			t.Fatalf("status %d, want 407 with Proxy-Authenticate", res.StatusCode)
		}
	}
}

func TestConnectTunnel(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure hello")
	}))
	defer up.Close()
	port := portOf(t, up.URL)
	r := newRig(t, []string{"registry.test:" + port}, nil, 443)
	r.mapHost(port, "registry.test")
	roots := x509.NewCertPool()
	roots.AddCert(up.Certificate())
	c := r.client(testUser, testPass, roots)
	// The test server's certificate names 127.0.0.1 and example.com, so
	// ask for the name through a dial override of the TLS name.
	c.Transport.(*http.Transport).TLSClientConfig.ServerName = "example.com"
	res, err := c.Get("https://registry.test:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "secure hello" {
		t.Fatalf("body %q", body)
	}
	// A plain tunnel shows the upstream's own certificate.
	if got := res.TLS.PeerCertificates[0]; !got.Equal(up.Certificate()) {
		t.Fatalf("the tunnel showed %s, not the upstream's certificate", got.Subject)
	}
	c.CloseIdleConnections()
	d := r.last(1)
	if !d.Allowed || d.Method != "CONNECT" || d.Brokered || d.BytesUp < 100 || d.BytesDown < 500 {
		t.Fatalf("decision = %+v", d)
	}
}

func TestPlainTCPByHostPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	r := newRig(t, []string{"echo.test:" + port}, nil, 443)
	r.mapHost(port, "echo.test")

	tunnel := func(target string) (net.Conn, string) {
		c, err := net.Dial("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		auth := "Basic " + b64(testUser+":"+testPass)
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\n", target, target, auth)
		status := make([]byte, 12)
		if _, err := io.ReadFull(c, status); err != nil {
			t.Fatal(err)
		}
		rest := make([]byte, 4096)
		n, _ := c.Read(rest)
		return c, string(status) + string(rest[:n])
	}
	c, head := tunnel("echo.test:" + port)
	if !strings.HasPrefix(head, "HTTP/1.1 200") {
		t.Fatalf("CONNECT answered %q", head)
	}
	io.WriteString(c, "ping over tcp")
	c.(*net.TCPConn).CloseWrite()
	got, _ := io.ReadAll(c)
	c.Close()
	if string(got) != "ping over tcp" {
		t.Fatalf("echo %q", got)
	}
	if d := r.last(1); !d.Allowed || d.BytesUp != 13 || d.BytesDown != 13 {
		t.Fatalf("decision = %+v", d)
	}

	// The same host on another port, and loopback by address: refused.
	for _, target := range []string{"echo.test:1", "127.0.0.1:" + port} {
		c, head := tunnel(target)
		c.Close()
		if !strings.HasPrefix(head, "HTTP/1.1 403") || !strings.Contains(head, headerRefused) {
			t.Errorf("CONNECT %s answered %q, want 403", target, head)
		}
	}
	// The metadata address, even where a rule allows it, is refused by
	// the check, which dials nothing: no traffic goes to an address this
	// test did not make.
	r.setPolicy([]string{"0.0.0.0/0"}, nil)
	if _, status, v := r.proxy.check(t.Context(), Identity{RuntimeID: "rt-1"}, "169.254.169.254", 80); status != http.StatusForbidden || !strings.Contains(v.Reason, "link-local") || v.Refusal != RefusalInternal {
		t.Errorf("the metadata address: %d %+v, want 403 naming link-local, refused as internal", status, v)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestDenyAppliesLive(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer up.Close()
	port := portOf(t, up.URL)
	r := newRig(t, []string{"registry.test:" + port}, nil, 443)
	r.mapHost(port, "registry.test")
	c := r.client(testUser, testPass, nil)
	get := func() int {
		res, err := c.Get("http://registry.test:" + port + "/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := get(); s != 200 {
		t.Fatalf("before deny: %d", s)
	}
	r.setPolicy([]string{"registry.test:" + port}, []string{"registry.test:" + port})
	if s := get(); s != 403 {
		t.Fatalf("after deny: %d, want 403", s)
	}
	if d := r.last(2); d.Reason != "denied by rule registry.test:"+port {
		t.Fatalf("reason %q", d.Reason)
	}
}

// TestBrokeredSecret: the sandbox sends a placeholder; the upstream gets
// the value; neither the sandbox, the logs nor the decisions see it.
func TestBrokeredSecret(t *testing.T) {
	const value = "sk-live-0123456789abcdef"
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		fmt.Fprintf(w, "auth-sha256=%s other=%s", hex.EncodeToString(sum[:]), r.Header.Get("X-Other"))
	}))
	up.StartTLS()
	defer up.Close()
	port := portOf(t, up.URL)
	r := newRig(t, []string{"api.model.test:" + port}, nil, mustAtoi(port))
	upRoots := x509.NewCertPool()
	upRoots.AddCert(up.Certificate())
	r.proxy.cfg.UpstreamRoots = upRoots
	// The httptest certificate is for example.com: broker that name, mapped
	// to loopback.
	r.mapHost(port, "example.com")
	r.setPolicy([]string{"example.com:" + port}, nil)
	ph := Placeholder("5ec7e7")
	r.brokers = []Brokered{{SecretID: "5ec7e7", Name: "MODEL_KEY", Placeholder: ph, Value: value, Hosts: []string{"example.com"}}}

	sandboxRoots := x509.NewCertPool()
	sandboxRoots.AppendCertsFromPEM(r.ca.CertPEM())
	c := r.client(testUser, testPass, sandboxRoots)
	for i := range 2 { // two requests on one intercepted connection
		req, _ := http.NewRequest("GET", "https://example.com:"+port+"/v1/models", nil)
		req.Header.Set("Authorization", "Bearer "+ph)
		req.Header.Set("X-Other", "kept")
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		want := sha256.Sum256([]byte("Bearer " + value))
		if string(body) != "auth-sha256="+hex.EncodeToString(want[:])+" other=kept" {
			t.Fatalf("request %d: upstream saw %q; want the brokered value in Authorization", i, body)
		}
		if res.TLS.PeerCertificates[0].Issuer.CommonName != "paddock egress CA" {
			t.Fatalf("the sandbox saw a certificate from %q, want the paddock CA", res.TLS.PeerCertificates[0].Issuer.CommonName)
		}
	}
	c.CloseIdleConnections()
	d := r.last(1)
	if !d.Allowed || !d.Brokered || d.BytesUp == 0 || d.BytesDown == 0 {
		t.Fatalf("decision = %+v", d)
	}
	r.mu.Lock()
	all := fmt.Sprintf("%+v", r.decisions)
	r.mu.Unlock()
	if strings.Contains(all, value) || strings.Contains(r.logs.String(), value) {
		t.Fatal("the brokered value reached the decisions or the logs")
	}
}

func TestCAIsKept(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.CertPEM(), b.CertPEM()) {
		t.Fatal("a second load made a new CA")
	}
	st, err := os.Stat(filepath.Join(dir, caKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("CA key: %v, mode %v; want 0600", err, st.Mode())
	}
}

// TestBrokeredValueNotEchoed: an upstream that echoes the request's
// headers back (in a header and, many times over and across read
// boundaries, in the body) shows the sandbox the placeholder, never the
// value.
func TestBrokeredValueNotEchoed(t *testing.T) {
	const value = "sk-live-echoed-0123456789"
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		w.Header().Set("X-Echo", auth)
		for i := range 5000 {
			fmt.Fprintf(w, "%s|%s|", strings.Repeat("x", i%37), auth)
		}
	}))
	up.StartTLS()
	defer up.Close()
	port := portOf(t, up.URL)
	r := newRig(t, []string{"example.com:" + port}, nil, mustAtoi(port))
	upRoots := x509.NewCertPool()
	upRoots.AddCert(up.Certificate())
	r.proxy.cfg.UpstreamRoots = upRoots
	r.mapHost(port, "example.com")
	ph := Placeholder("ec40")
	r.brokers = []Brokered{{SecretID: "ec40", Name: "KEY", Placeholder: ph, Value: value, Hosts: []string{"example.com"}}}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(r.ca.CertPEM())
	req, _ := http.NewRequest("GET", "https://example.com:"+port+"/echo", nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	res, err := r.client(testUser, testPass, roots).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), value) || strings.Contains(res.Header.Get("X-Echo"), value) {
		t.Fatal("the sandbox read the brokered value from the answer")
	}
	if res.Header.Get("X-Echo") != "Bearer "+ph || strings.Count(string(body), "Bearer "+ph) != 5000 {
		t.Fatalf("the echo, scrubbed: header %q, %d placeholders in the body", res.Header.Get("X-Echo"), strings.Count(string(body), "Bearer "+ph))
	}
}

// TestScrubReader reads a stream one byte at a time, with values at the
// start, the end, back to back and across every boundary.
func TestScrubReader(t *testing.T) {
	brokers := []Brokered{{Value: "SECRET", Placeholder: "<a>"}, {Value: "KEY", Placeholder: "<b>"}}
	in := "SECRETxxSECRETSECRETyKEYKEzKEYSECRE"
	want := "<a>xx<a><a>y<b>KEz<b>SECRE"
	got, err := io.ReadAll(newScrubReader(io.NopCloser(iotest.OneByteReader(strings.NewReader(in))), brokers))
	if err != nil || string(got) != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// TestNoBrokeringWithoutSecrets: a sandbox started without secrets gets a
// plain tunnel even to a brokered host on a broker port, and the proxy
// never looks its secrets up.
func TestNoBrokeringWithoutSecrets(t *testing.T) {
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Authorization"))
	}))
	up.StartTLS()
	defer up.Close()
	port := portOf(t, up.URL)
	r := newRig(t, []string{"example.com:" + port}, nil, mustAtoi(port))
	r.mapHost(port, "example.com")
	r.brokers = []Brokered{{SecretID: "s", Placeholder: Placeholder("s"), Value: "sk-never", Hosts: []string{"example.com"}}}
	roots := x509.NewCertPool()
	roots.AddCert(up.Certificate()) // the upstream's own certificate: not intercepted
	req, _ := http.NewRequest("GET", "https://example.com:"+port+"/", nil)
	req.Header.Set("Authorization", Placeholder("s"))
	res, err := r.client(noSecretsUser, testPass, roots).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	r.mu.Lock()
	calls := r.brokerCalls
	r.mu.Unlock()
	if string(body) != Placeholder("s") || calls != 0 {
		t.Fatalf("upstream saw %q after %d broker lookups; want the placeholder untouched and none", body, calls)
	}
}

// TestBrokeredTunnelRefusesAnotherHost: inside a tunnel to a brokered
// host, a request whose Host names another host is refused with the
// proxy's 403 before any secret is put into it (no domain fronting).
func TestBrokeredTunnelRefusesAnotherHost(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.WriteString(w, r.Host)
	}))
	up.StartTLS()
	defer up.Close()
	port := portOf(t, up.URL)
	r := newRig(t, []string{"example.com:" + port}, nil, mustAtoi(port))
	upRoots := x509.NewCertPool()
	upRoots.AddCert(up.Certificate())
	r.proxy.cfg.UpstreamRoots = upRoots
	r.mapHost(port, "example.com")
	ph := Placeholder("f40")
	r.brokers = []Brokered{{SecretID: "f40", Name: "KEY", Placeholder: ph, Value: "sk-fronted", Hosts: []string{"example.com"}}}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(r.ca.CertPEM())
	c := r.client(testUser, testPass, roots)
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"EXAMPLE.com.:" + port, http.StatusOK}, // the tunnel's host, written otherwise
		{"other.test:" + port, http.StatusForbidden},
		{"other.test", http.StatusForbidden},
		{"example.com:1", http.StatusForbidden},
	} {
		req, _ := http.NewRequest("GET", "https://example.com:"+port+"/", nil)
		req.Host = tc.host
		req.Header.Set("Authorization", "Bearer "+ph)
		before := calls.Load()
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("Host %s: %v", tc.host, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("Host %s: %d %q, want %d", tc.host, res.StatusCode, body, tc.status)
		}
		if tc.status == http.StatusForbidden && (res.Header.Get(headerRefused) != refusedValue || calls.Load() != before) {
			t.Errorf("Host %s: refusal header %q, upstream called %d times; want the proxy's refusal and no upstream call", tc.host, res.Header.Get(headerRefused), calls.Load()-before)
		}
	}
	c.CloseIdleConnections()
	for n := 1; n <= 3; n++ { // a tunnel ends at its refusal: the first also carried the answered request
		if d := r.last(n); d.Allowed || !strings.Contains(d.Reason, "inside a tunnel to example.com") {
			t.Errorf("decision %d: %+v, want the refusal recorded", n, d)
		}
	}
	if !strings.Contains(r.logs.String(), "another host in a brokered tunnel") {
		t.Error("the refusal was not logged")
	}
}
