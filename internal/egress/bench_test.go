package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
)

// benchRig is an HTTPS upstream on loopback, named example.com (its
// certificate's name) through the proxy's host map, and a proxy that
// allows it.
type benchRig struct {
	*rig
	up   *httptest.Server
	port string
	big  []byte
}

func newBenchRig(b *testing.B) *benchRig {
	br := &benchRig{big: make([]byte, 16<<20)}
	br.up = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write(br.big)
			return
		}
		io.WriteString(w, "ok")
	}))
	br.up.StartTLS()
	b.Cleanup(br.up.Close)
	br.port = portOf(b, br.up.URL)
	br.rig = newRig(b, []string{"example.com:" + br.port}, nil, mustAtoi(br.port))
	roots := x509.NewCertPool()
	roots.AddCert(br.up.Certificate())
	br.proxy.cfg.UpstreamRoots = roots
	br.mapHost(br.port, "example.com")
	return br
}

// client returns a client to the upstream: direct, or through the proxy
// (trusting the upstream's and the paddock CA's certificates).
func (br *benchRig) client(proxied, keepAlive bool) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(br.up.Certificate())
	roots.AppendCertsFromPEM(br.ca.CertPEM())
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		DisableKeepAlives: !keepAlive,
		ForceAttemptHTTP2: false,
	}
	if proxied {
		tr.Proxy = br.rig.client(testUser, testPass, nil).Transport.(*http.Transport).Proxy
	} else {
		// example.com is the upstream on loopback, as the proxy's host map says.
		tr.DialContext = (&loopbackDialer{}).DialContext
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func (br *benchRig) get(c *http.Client, path string) error {
	req, _ := http.NewRequest("GET", "https://example.com:"+br.port+path, nil)
	req.Header.Set("Authorization", "Bearer "+Placeholder("bench"))
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != 200 {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	return nil
}

// BenchmarkProxiedHTTPS compares one HTTPS request to a local server
// reached directly, through the proxy's CONNECT tunnel, and brokered
// (intercepted, the placeholder swapped), each on a kept-alive connection
// and on a new connection per request.
//
//	go test -run '^$' -bench ProxiedHTTPS -benchtime 1000x -count 2 ./internal/egress
func BenchmarkProxiedHTTPS(b *testing.B) {
	br := newBenchRig(b)
	for _, mode := range []string{"direct", "proxied", "brokered"} {
		for _, keep := range []bool{true, false} {
			name := mode + "/new-connection"
			if keep {
				name = mode + "/keep-alive"
			}
			b.Run(name, func(b *testing.B) {
				br.mu.Lock()
				br.brokers = nil
				if mode == "brokered" {
					br.brokers = []Brokered{{SecretID: "bench", Name: "KEY", Placeholder: Placeholder("bench"), Value: "sk-bench-value", Hosts: []string{"example.com"}}}
				}
				br.mu.Unlock()
				c := br.client(mode != "direct", keep)
				defer c.CloseIdleConnections()
				if err := br.get(c, "/"); err != nil { // warm up the connection
					b.Fatal(err)
				}
				testenv.BenchLatency(b, func() error { return br.get(c, "/") })
			})
		}
	}
}

// BenchmarkProxiedThroughput compares a 16 MiB HTTPS download from a
// local server, directly and through the proxy's CONNECT tunnel.
//
//	go test -run '^$' -bench ProxiedThroughput -benchtime 50x ./internal/egress
func BenchmarkProxiedThroughput(b *testing.B) {
	br := newBenchRig(b)
	for _, mode := range []string{"direct", "proxied"} {
		b.Run(mode, func(b *testing.B) {
			br.mu.Lock()
			br.brokers = nil
			br.mu.Unlock()
			c := br.client(mode == "proxied", true)
			defer c.CloseIdleConnections()
			b.SetBytes(int64(len(br.big)))
			for b.Loop() {
				if err := br.get(c, "/big"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// loopbackDialer dials loopback whatever the name: the direct baseline
// reaches the same server the proxy's host map names.
type loopbackDialer struct{}

func (loopbackDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
}
