package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/pkg/client"
)

// mcpPath is where the MCP server answers.
const mcpPath = "/mcp"

// MCP is paddock's MCP server (internal/mcp) at /mcp, over Streamable
// HTTP: version is the server's, given in initialize.
//
// A request to /mcp is authenticated by its bearer credential alone
// (an API key or a session token; never the console's cookie) and
// rate limited like any other (admit): without a valid one it is 401.
// The tools then call this API in-process with that same credential
// (inProcess), so every call is authorized, rate limited and tracked as
// the caller's own; nothing goes around the routes' checks.
func MCP(version string) Feature {
	return Feature{Name: "mcp", use: func(a *API) {
		a.mcp = mcp.Handler(a.mcpClient(version), mcp.Options{Version: version}, a.logger)
		// A file tool holds up to mcp.MaxFileBytes (in base64, twice: as
		// text and as structured content) while it answers, so how many
		// requests one user has in flight is bounded as exec streams are
		// (Limits.MCPPerUser; past it, 429 too_many_mcp_requests_per_user).
		a.mcpCaps = &caps{kind: "mcp_requests", perRuntime: -1, perUser: a.limits.MCPPerUser, state: a.state}
	}, routes: func(*API) []Route { return nil }}
}

// IsMCP reports whether r goes to the MCP server rather than to the API's
// routes.
func (a *API) IsMCP(r *http.Request) bool { return a.mcp != nil && r.URL.Path == mcpPath }

// serveMCP answers a request to /mcp; ok is false when r is not one.
// The request lives as a stream of its credential's (live): revoking the
// key, ending the session or deleting its user ends the calls it carries
// at once (and the API ends an exec in flight of a member removed from
// its org, as it does for any caller).
func (a *API) serveMCP(w http.ResponseWriter, r *http.Request) bool {
	if !a.IsMCP(r) {
		return false
	}
	id, err := a.admit(w, r, func() (auth.Identity, error) { return a.authenticate(w, r) })
	if err != nil {
		a.fail(r.Context(), w, err)
		return true
	}
	release, err := a.mcpCaps.acquire(r.Context(), "", id.Principal())
	if err != nil {
		a.fail(r.Context(), w, err)
		return true
	}
	defer release()
	ctx, end := a.live.open(auth.WithIdentity(r.Context(), id), id, "")
	defer end()
	a.mcp.ServeHTTP(w, r.WithContext(ctx))
	return true
}

// mcpClient gives an MCP request the SDK client its tools call: its own
// bearer credential, sent in-process to this API.
func (a *API) mcpClient(version string) func(r *http.Request) (*client.Client, error) {
	return func(r *http.Request) (*client.Client, error) {
		cred, _ := bearerToken(r.Header.Get("Authorization"))
		host := r.Host
		if host == "" {
			host = "localhost"
		}
		hc := &http.Client{Transport: inProcess{a: a, from: a.clientAddr(r), outer: r.Context()}}
		return client.New(a.preview.Scheme+"://"+host, cred, client.WithHTTPClient(hc), client.WithUserAgent("paddock-mcp/"+version))
	}
}

// inProcess hands requests to the API's own handler, as requests from the
// address the MCP request came from, to the host it came to (which no
// preview or E2B host is, or they would have taken it), each ended when
// that MCP request ends (outer). Answers stream back through a pipe as
// they are written.
type inProcess struct {
	a     *API
	from  string
	outer context.Context
}

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.outer, cancel)
	in := req.Clone(ctx)
	in.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	in.RequestURI, in.Host = req.URL.RequestURI(), req.URL.Host
	in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1
	in.RemoteAddr = net.JoinHostPort(t.from, "0")
	if in.Body == nil {
		in.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	rw := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan *http.Response, 1),
		resp: &http.Response{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
			Body: &endBody{ReadCloser: pr, end: func() { stop(); cancel() }}}}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				// An aborted handler (http.ErrAbortHandler): the answer
				// breaks off, as a connection would.
				_ = pw.CloseWithError(fmt.Errorf("the handler aborted: %v", p))
				rw.once.Do(func() { rw.ready <- nil })
			}
		}()
		t.a.ServeHTTP(rw, in)
		rw.WriteHeader(http.StatusOK)
		_ = pw.Close()
	}()
	select {
	case resp := <-rw.ready:
		if resp == nil {
			stop()
			cancel()
			return nil, errHandlerAborted
		}
		return resp, nil
	case <-ctx.Done():
		_ = pr.CloseWithError(ctx.Err())
		stop()
		cancel()
		return nil, ctx.Err()
	}
}

// errHandlerAborted is an in-process request whose handler aborted
// before it answered.
var errHandlerAborted = errors.New("the API's handler aborted the request")

// pipeWriter is the ResponseWriter of an in-process request: the status
// and headers once written, then the body through the pipe.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan *http.Response
	resp   *http.Response
}

func (p *pipeWriter) Header() http.Header { return p.header }

func (p *pipeWriter) WriteHeader(code int) {
	if code < http.StatusOK {
		return // informational answers are not the answer
	}
	p.once.Do(func() {
		p.resp.StatusCode, p.resp.Status = code, strconv.Itoa(code)+" "+http.StatusText(code)
		p.resp.Header = p.header.Clone()
		p.resp.ContentLength = -1
		if n, err := strconv.ParseInt(p.header.Get("Content-Length"), 10, 64); err == nil {
			p.resp.ContentLength = n
		}
		p.ready <- p.resp
	})
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.pw.Write(b)
}

// Flush does nothing: each write reaches the reader as it is made.
func (p *pipeWriter) Flush() {}

// endBody is an answer's body that ends its request when closed.
type endBody struct {
	io.ReadCloser
	end func()
}

func (b *endBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}
