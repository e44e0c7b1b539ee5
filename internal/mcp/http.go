package mcp

import (
	"log/slog"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/pkg/client"
)

// MaxRequestBytes bounds one request to the HTTP transport: a write_file
// of MaxFileBytes in base64, and its JSON around it.
const MaxRequestBytes = MaxFileBytes*4/3 + 1<<20

// Handler serves the tools over MCP's Streamable HTTP transport,
// stateless: each POST is a whole exchange (initialize, a list, a call),
// served by a server of its own whose tools call the API through
// clientFor(r), the client of that request's credential. No session
// outlives its request, so any replica can answer the next one, and a
// credential revoked or expired is refused at the very next request.
//
// The caller authenticates each request before it comes here: the
// handler itself trusts whatever credential clientFor finds. The query
// parameters org and ws set the tools' defaults (/mcp?org=acme&ws=dev),
// over o's.
func Handler(clientFor func(r *http.Request) (*client.Client, error), o Options, logger *slog.Logger) http.Handler {
	if o.Schemas == nil {
		o.Schemas = sdk.NewSchemaCache()
	}
	return sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		c, err := clientFor(r)
		if err != nil {
			logger.WarnContext(r.Context(), "mcp: no client for the request", "err", err)
			return nil // the SDK answers 400
		}
		ro := o
		q := r.URL.Query()
		ro.Org, ro.Workspace = first(q.Get("org"), o.Org), first(q.Get("ws"), q.Get("workspace"), o.Workspace)
		return NewServer(c, ro)
	}, &sdk.StreamableHTTPOptions{
		Stateless: true,
		Logger:    logger,
		// Every request carries a bearer credential, which a page that
		// rebinds a name to loopback does not have; and a server behind a
		// proxy on loopback sees its public name as the Host.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        MaxRequestBytes,
	})
}
