package agentconn

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Forwarder sends raw HTTP requests to the agent's own mux (its Connect
// services and the plain HTTP routes it serves beside them, such as
// envd's /health and /files) over the client's HTTP/2 connection: the
// same connection, dialed on first use and redialed if it breaks, that
// the client's own calls share. It is an http.RoundTripper for
// httputil.ReverseProxy; see Client.Forwarder.
type Forwarder struct{ c *Client }

// Forwarder returns the client's Forwarder. Which paths it may carry is
// the caller's to decide: the agent serves every route to whoever
// reaches it.
func (c *Client) Forwarder() Forwarder { return Forwarder{c} }

var agentURL, _ = url.Parse(baseURL)

// RoundTrip sends r to the agent, keeping its method, path, query,
// headers and body; only the scheme and host are the link's. Ending r's
// context ends the call (the agent sees its stream reset). A link that
// cannot be dialed, or breaks before an answer, is errdefs.ErrUnavailable
// "agent_unavailable"; an ended context is returned as it is.
func (f Forwarder) RoundTrip(r *http.Request) (*http.Response, error) {
	out := r.Clone(r.Context())
	u := *r.URL
	u.Scheme, u.Host = agentURL.Scheme, agentURL.Host
	out.URL = &u
	out.Host = agentURL.Host
	resp, err := f.c.transport.RoundTrip(out)
	if err == nil {
		// The transport watches the context only until the answer
		// starts, and again once the request's body is all sent: a
		// caller that goes away while a body still streams ends the
		// call here.
		stop := context.AfterFunc(r.Context(), func() { resp.Body.Close() })
		resp.Body = &stopBody{ReadCloser: resp.Body, stop: stop}
		return resp, nil
	}
	if r.Context().Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, err
	}
	return nil, errdefs.Unavailable("agent_unavailable", "the sandbox agent is unreachable").WithCause(err)
}

// stopBody is an answer's body that stops watching the request's context
// once closed.
type stopBody struct {
	io.ReadCloser
	stop func() bool
}

func (b *stopBody) Close() error {
	b.stop()
	return b.ReadCloser.Close()
}
