package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// Brokered is a secret the proxy adds to requests for its hosts: the
// sandbox holds only Placeholder, and the proxy swaps it for Value in the
// headers of requests to Hosts. A compromised agent can use the secret
// but never read it.
type Brokered struct {
	SecretID    string
	Name        string
	Placeholder string
	Value       string
	// Hosts are domain patterns (api.example.com, *.example.com).
	Hosts []string
}

// Placeholder is what a sandbox sees instead of a brokered secret's value.
// It names the secret, not its value.
func Placeholder(secretID string) string { return "paddock-brokered-" + secretID }

// brokersFor returns the brokered secrets to put into a tunnel to t: only
// for a sandbox that has secrets, on the broker ports (HTTPS), when the
// proxy has a CA. Config.Brokers is asked for t's host; the proxy keeps
// only those whose hosts name it all the same.
func (p *Proxy) brokersFor(ctx context.Context, id Identity, t target) []Brokered {
	if len(id.SecretIDs) == 0 || p.leaves == nil || p.cfg.Brokers == nil || !slices.Contains(p.cfg.BrokerPorts, t.port) {
		return nil
	}
	all, err := p.cfg.Brokers(ctx, id, t.host)
	if err != nil {
		p.cfg.Logger.Warn("egress: brokered secrets lookup failed", "runtime", id.RuntimeID, "err", err)
		return nil
	}
	var out []Brokered
	for _, b := range all {
		if slices.ContainsFunc(b.Hosts, func(h string) bool { return MatchDomain(strings.ToLower(h), t.host) }) {
			out = append(out, b)
		}
	}
	return out
}

// intercept terminates the sandbox's TLS with a certificate from the
// installation's CA, and forwards each request over TLS of its own to the
// real host, with the brokered secrets' placeholders in its headers
// replaced by their values. Bodies pass unchanged.
func (p *Proxy) intercept(ctx context.Context, client net.Conn, t target, brokers []Brokered, d *Decision) {
	defer client.Close()
	up := &countConn{Conn: client}
	cert, err := p.leaves.get(t.host)
	if err != nil {
		d.Allowed, d.Reason, d.Refusal = false, "cannot mint a certificate for "+t.host, RefusalProxy
		return
	}
	tc := tls.Server(up, &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
	if err := tc.HandshakeContext(ctx); err != nil {
		d.Reason += "; the sandbox's TLS handshake failed (does it trust the paddock CA?)"
		return
	}
	dialer := &tls.Dialer{
		NetDialer: p.dialer(t),
		Config:    &tls.Config{ServerName: t.host, RootCAs: p.cfg.UpstreamRoots, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12},
	}
	raw, err := dialer.DialContext(ctx, "tcp", t.addr.String())
	if err != nil {
		d.Allowed, d.Reason, d.Refusal = false, "upstream failed: "+errorClass(err), RefusalUpstream
		return
	}
	d.Addr = t.addr.String()
	defer raw.Close()
	replacer := brokerReplacer(brokers)
	in, out := bufio.NewReader(tc), bufio.NewReader(raw)
	for {
		req, err := http.ReadRequest(in)
		if err != nil {
			break
		}
		if !sameHost(req.Host, t) {
			// A secret goes to the host the tunnel was checked for,
			// never under another Host (domain fronting).
			d.Allowed, d.Reason, d.Refusal = false, "a request for host "+strconv.Quote(req.Host)+" inside a tunnel to "+t.host, RefusalMalformed
			p.cfg.Logger.Warn("egress: refused a request for another host in a brokered tunnel", "runtime", d.RuntimeID, "tunnel", t.host, "host", req.Host)
			refuseInTunnel(tc, d.Reason)
			break
		}
		for k, vs := range req.Header {
			for i, v := range vs {
				req.Header[k][i] = replacer.Replace(v)
			}
		}
		stripHop(req.Header)
		req.Header.Del("Proxy-Authorization")
		// An identity body can be scrubbed (below); a compressed one
		// could not.
		req.Header.Del("Accept-Encoding")
		if err := req.Write(raw); err != nil {
			break
		}
		res, err := http.ReadResponse(out, req)
		if err != nil {
			break
		}
		scrubResponse(res, brokers)
		err = res.Write(tc)
		_ = res.Body.Close()
		if err != nil || req.Close || res.Close {
			break
		}
	}
	d.BytesUp, d.BytesDown = up.read.Load(), up.written.Load()
}

// sameHost reports whether a request's Host names the tunnel's host and
// port (the port may be left out).
func sameHost(authority string, t target) bool {
	host, port, ok := hostPort(authority, t.port)
	return ok && port == t.port && strings.TrimSuffix(strings.ToLower(host), ".") == t.host
}

// refuseInTunnel answers a request inside an intercepted tunnel with the
// proxy's 403, and closes the connection after it.
func refuseInTunnel(w io.Writer, reason string) {
	body := "paddock egress proxy: " + reason + "\n"
	res := &http.Response{
		StatusCode: http.StatusForbidden, ProtoMajor: 1, ProtoMinor: 1, Close: true,
		Header:        http.Header{headerRefused: {refusedValue}, "Content-Type": {"text/plain; charset=utf-8"}},
		ContentLength: int64(len(body)), Body: io.NopCloser(strings.NewReader(body)),
	}
	_ = res.Write(w)
}

// scrubResponse puts the placeholders back where an upstream echoes a
// brokered value, in the headers and the body of its answer, so that the
// sandbox can use a secret but never read it. A body whose encoding is not
// identity (the proxy asked for identity) passes as it is.
func scrubResponse(res *http.Response, brokers []Brokered) {
	back := make([]string, 0, 2*len(brokers))
	for _, b := range brokers {
		back = append(back, b.Value, b.Placeholder)
	}
	rep := strings.NewReplacer(back...)
	for k, vs := range res.Header {
		for i, v := range vs {
			res.Header[k][i] = rep.Replace(v)
		}
	}
	if enc := res.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		return
	}
	if res.Body == nil || res.Body == http.NoBody {
		return
	}
	res.Body = newScrubReader(res.Body, brokers)
	res.ContentLength = -1
	res.Header.Del("Content-Length")
	res.TransferEncoding = []string{"chunked"}
}

// scrubReader replaces brokered values with their placeholders in a
// stream, holding back only the bytes that might begin a value.
type scrubReader struct {
	r       io.ReadCloser
	brokers []Brokered
	keep    int // the longest value, less one
	chunk   []byte
	buf     []byte // read, not yet scanned to the end
	out     []byte // scrubbed, not yet returned
	err     error
}

func newScrubReader(r io.ReadCloser, brokers []Brokered) *scrubReader {
	s := &scrubReader{r: r, brokers: brokers, chunk: make([]byte, 32<<10)}
	for _, b := range brokers {
		s.keep = max(s.keep, len(b.Value)-1)
	}
	return s
}

func (s *scrubReader) Read(p []byte) (int, error) {
	for len(s.out) == 0 && s.err == nil {
		n, err := s.r.Read(s.chunk)
		s.buf = append(s.buf, s.chunk[:n]...)
		s.err = err
		s.scan(err != nil)
	}
	if len(s.out) == 0 {
		return 0, s.err
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// scan moves what is certainly scrubbed from buf to out; at the end, all.
func (s *scrubReader) scan(final bool) {
	for {
		at, which := -1, 0
		for i, b := range s.brokers {
			if j := bytes.Index(s.buf, []byte(b.Value)); j >= 0 && (at < 0 || j < at) {
				at, which = j, i
			}
		}
		if at < 0 {
			break
		}
		s.out = append(s.out, s.buf[:at]...)
		s.out = append(s.out, s.brokers[which].Placeholder...)
		s.buf = s.buf[at+len(s.brokers[which].Value):]
	}
	cut := len(s.buf) - s.keep
	if final {
		cut = len(s.buf)
	}
	if cut > 0 {
		s.out = append(s.out, s.buf[:cut]...)
		s.buf = append([]byte(nil), s.buf[cut:]...)
	}
}

func (s *scrubReader) Close() error { return s.r.Close() }

func brokerReplacer(brokers []Brokered) *strings.Replacer {
	pairs := make([]string, 0, 2*len(brokers))
	for _, b := range brokers {
		pairs = append(pairs, b.Placeholder, b.Value)
	}
	return strings.NewReplacer(pairs...)
}

// countConn counts what passes through a connection.
type countConn struct {
	net.Conn
	read, written atomic.Int64
}

func (c *countConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read.Add(int64(n))
	return n, err
}

func (c *countConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.written.Add(int64(n))
	return n, err
}
