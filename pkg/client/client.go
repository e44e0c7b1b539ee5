// Package client is paddock's public Go SDK: a typed client of the HTTP API.
//
// Create one with New and call a method per route:
//
//	c, err := client.New("http://127.0.0.1:8080", "pdk_…")
//	p, err := c.CreateProject(ctx, "acme", "research", client.CreateProjectRequest{Name: "agent"})
//	rt, err := c.StartRuntime(ctx, "acme", "research", p.RuntimeID, client.StartRuntimeRequest{})
//
// The credential is an API key ("pdk_…") or the token of a wallet sign-in
// ("v4.local.…", see SignIn); both are sent as a bearer token.
//
// Every error the server answers is an *Error carrying the HTTP status and
// the API's stable machine code. Match its kind with errors.Is against the
// sentinels in errors.go (errors.Is(err, client.ErrNotFound)) and its code
// with IsCode (client.IsCode(err, "runtime_has_no_sandbox")); never match
// an error's text.
//
// This package imports nothing from paddock's internal packages, so it can
// be used on its own.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// DefaultUserAgent is the User-Agent the client sends unless told otherwise.
const DefaultUserAgent = "paddock-go-client"

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// Client talks to one paddock server with one credential. It is safe for
// concurrent use.
type Client struct {
	base       string // scheme://host[/prefix], no trailing slash
	credential string // an API key or a session token; "" for none
	http       *http.Client
	userAgent  string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc (for
// timeouts, proxies or TLS settings). nil keeps the default.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.http = hc
		}
	}
}

// WithUserAgent sets the User-Agent header. "" keeps the default.
func WithUserAgent(ua string) Option {
	return func(c *Client) {
		if ua != "" {
			c.userAgent = ua
		}
	}
}

// New returns a client of the server at baseURL (for example
// "http://127.0.0.1:8080", or "https://example.com/paddock" behind a
// proxy) that authenticates with credential: an API key ("pdk_…") or a
// session token from SignIn ("v4.local.…"), sent alike as
// `Authorization: Bearer …`. credential may be empty for routes that need
// none (Health, AuthChallenge, CreateSession, SignIn). A malformed baseURL
// is ErrInvalidArgument.
func New(baseURL, credential string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, fmt.Errorf("%w: server URL %q: %v", ErrInvalidArgument, baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: server URL %q must start with http:// or https://", ErrInvalidArgument, baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: server URL %q has no host", ErrInvalidArgument, baseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: server URL %q must not carry credentials, a query or a fragment", ErrInvalidArgument, baseURL)
	}
	if strings.ContainsAny(credential, "\r\n") {
		return nil, fmt.Errorf("%w: the API key or token must be a single line", ErrInvalidArgument)
	}
	base := u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
	c := &Client{base: base, credential: credential, http: http.DefaultClient, userAgent: DefaultUserAgent}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the server URL the client talks to.
func (c *Client) BaseURL() string { return c.base }

// path joins path segments under prefix, each escaped with url.PathEscape
// so that a name can never change the route. An empty, "." or ".."
// segment is ErrInvalidArgument: it would name another route.
func path(prefix string, segments ...string) (string, error) {
	var b strings.Builder
	b.WriteString(prefix)
	for _, s := range segments {
		switch s {
		case "":
			return "", fmt.Errorf("%w: an empty name or id in %s", ErrInvalidArgument, prefix)
		case ".", "..":
			return "", fmt.Errorf("%w: %q is not a name or id", ErrInvalidArgument, s)
		}
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String(), nil
}

// route is a request path, or the reason it could not be built.
type route struct {
	path string
	err  error
}

func routeOf(prefix string, segments ...string) route {
	p, err := path(prefix, segments...)
	return route{p, err}
}

// orgRoute is the route of org's resource named by rest.
func orgRoute(org string, rest ...string) route {
	return routeOf("/api/v1/org", append([]string{org}, rest...)...)
}

// wsRoute is the route of workspace ws's resource named by rest.
func wsRoute(org, ws string, rest ...string) route {
	return orgRoute(org, append([]string{"ws", ws}, rest...)...)
}

// call sends one request and decodes its answer into a T.
func call[T any](ctx context.Context, c *Client, method string, r route, q url.Values, in any) (T, error) {
	var out T
	if r.err != nil {
		return out, r.err
	}
	err := c.do(ctx, method, r.path, q, in, &out)
	return out, err
}

// callDiscard sends one request and discards its answer.
func (c *Client) callDiscard(ctx context.Context, method string, r route, q url.Values, in any) error {
	if r.err != nil {
		return r.err
	}
	return c.do(ctx, method, r.path, q, in, nil)
}

// sendFor sends a raw body (nil for none) of contentType and decodes the
// JSON answer into a T.
func sendFor[T any](ctx context.Context, c *Client, method string, r route, q url.Values, body io.Reader, contentType string) (T, error) {
	var out T
	if body == nil {
		body = http.NoBody
	}
	resp, err := c.open(ctx, method, r, q, body, contentType, "application/json")
	if err != nil {
		return out, err
	}
	defer closeBody(resp)
	err = decodeJSON(resp, method, r.path, &out)
	return out, err
}

// open sends one request and returns a 2xx response whose body the caller
// reads and closes; see send.
func (c *Client) open(ctx context.Context, method string, r route, q url.Values, body io.Reader, contentType, accept string) (*http.Response, error) {
	if r.err != nil {
		return nil, r.err
	}
	return c.send(ctx, method, r.path, q, body, contentType, accept)
}

// ListOptions pages a listing: Cursor is a previous page's NextCursor
// ("" for the first page), Limit the page size (0 for the server's
// default).
type ListOptions struct {
	Cursor string
	Limit  int
}

func (o ListOptions) query() url.Values {
	return queryOf(map[string]string{"cursor": o.Cursor}, o.Limit)
}

// queryOf makes a query of the fields that are not empty and of limit
// when it is not 0.
func queryOf(fields map[string]string, limit int) url.Values {
	q := url.Values{}
	for k, v := range fields {
		if v != "" {
			q.Set(k, v)
		}
	}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return q
}

// do sends one request and decodes a 2xx JSON answer into out (nil to
// discard it). in, when not nil, is sent as the JSON body. A non-2xx
// answer is an *Error.
func (c *Client) do(ctx context.Context, method, p string, q url.Values, in, out any) error {
	var body io.Reader
	contentType := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("paddock: encode %s %s: %w", method, p, err)
		}
		body, contentType = bytes.NewReader(b), "application/json"
	}
	resp, err := c.send(ctx, method, p, q, body, contentType, "application/json")
	if err != nil {
		return err
	}
	defer closeBody(resp)
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	return decodeJSON(resp, method, p, out)
}

// decodeJSON decodes the JSON answer to method p into out.
func decodeJSON(resp *http.Response, method, p string, out any) error {
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("paddock: decode the answer to %s %s: %w", method, p, err)
	}
	return nil
}

// send sends one request with body (nil for none) of contentType and
// returns a 2xx response, whose body the caller must close (closeBody). A
// non-2xx answer is an *Error.
func (c *Client) send(ctx context.Context, method, p string, q url.Values, body io.Reader, contentType, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(p, q), body)
	if err != nil {
		return nil, fmt.Errorf("paddock: %s %s: %w", method, p, err)
	}
	req.Header.Set("Accept", accept)
	c.identify(req.Header)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("paddock: %s %s: %w", method, p, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer closeBody(resp)
		return nil, decodeError(resp)
	}
	return resp, nil
}

// endpoint is the URL of path p with query q.
func (c *Client) endpoint(p string, q url.Values) string {
	u := c.base + p
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// identify sets the headers that say who calls: the User-Agent and, with
// a credential, Authorization.
func (c *Client) identify(h http.Header) {
	h.Set("User-Agent", c.userAgent)
	if c.credential != "" {
		h.Set("Authorization", "Bearer "+c.credential)
	}
}

// closeBody drains a little of a response so that its connection can be
// reused, and closes it.
func closeBody(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
}

// decodeError turns a non-2xx response into an *Error. A body that is not
// the API's JSON error (a proxy's HTML page, plain text) still yields one,
// with a generic code for the status and the body's text as the message.
func decodeError(resp *http.Response) *Error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{}
	if err := json.Unmarshal(raw, e); err != nil || e.Code == "" {
		// Not the API's error body: keep nothing of a partial decode.
		e = &Error{Code: codeForStatus(resp.StatusCode), Message: plainMessage(raw, resp.StatusCode)}
	}
	e.StatusCode = resp.StatusCode
	if e.Message == "" {
		e.Message = plainMessage(nil, resp.StatusCode)
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	return e
}

// plainMessage makes a one-line message of a non-JSON error body.
func plainMessage(raw []byte, status int) string {
	msg := strings.Join(strings.Fields(string(raw)), " ")
	if msg == "" || strings.HasPrefix(msg, "<") || !isText(msg) {
		if t := http.StatusText(status); t != "" {
			return t
		}
		return "HTTP status " + strconv.Itoa(status)
	}
	const maxLen = 300
	if len(msg) > maxLen {
		msg = strings.ToValidUTF8(msg[:maxLen], "") + "…"
	}
	return msg
}

func isText(s string) bool {
	for _, r := range s {
		if r == '\uFFFD' || (r < 0x20 && r != '\t') {
			return false
		}
	}
	return true
}

// errorAs is errors.As for *Error.
func errorAs(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
