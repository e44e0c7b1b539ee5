package mcp

import (
	"context"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/pkg/client"
)

// PreviewInput names a port of a runtime.
type PreviewInput struct {
	Target
	Port int    `json:"port" jsonschema:"the TCP port in the sandbox, 1 to 65535"`
	TTL  string `json:"ttl,omitempty" jsonschema:"how long a private port's token lasts, such as 30m; default 1h, at most 24h"`
}

// Preview is a port's URL.
type Preview struct {
	Port      int    `json:"port"`
	Public    bool   `json:"public" jsonschema:"the port is public: its URL needs no token"`
	URL       string `json:"url" jsonschema:"the preview URL (a preview host), with the token of a private port"`
	PathURL   string `json:"path_url" jsonschema:"the same port under the paddock server's own URL, with the token of a private port"`
	ExpiresAt string `json:"expires_at,omitempty" jsonschema:"when a private port's token expires, RFC 3339"`
}

// previewURL answers a public port's URLs as they are, and a private
// port's with a new preview token (POST …/previews/{port}/token).
func (t *tools) previewURL(ctx context.Context, in PreviewInput) (Preview, error) {
	if in.Port < 1 || in.Port > 65535 {
		return Preview{}, errorf("invalid_port", "port must be between 1 and 65535")
	}
	org, ws, id, err := t.runtime(ctx, in.Target)
	if err != nil {
		return Preview{}, err
	}
	ports, err := t.c.ListPorts(ctx, org, ws, id)
	if err != nil {
		return Preview{}, err
	}
	for _, p := range ports.Items {
		if p.Port == in.Port && p.Public {
			return Preview{Port: p.Port, Public: true, URL: p.URL, PathURL: t.c.BaseURL() + p.PathURL}, nil
		}
	}
	tok, err := t.c.PreviewToken(ctx, org, ws, id, in.Port, client.PreviewTokenRequest{TTL: in.TTL})
	if err != nil {
		return Preview{}, err
	}
	path := t.c.BaseURL() + "/api/v1/org/" + org + "/ws/" + ws + "/runtimes/" + id + "/ports/" + strconv.Itoa(in.Port) + "/?token=" + tok.Token
	return Preview{Port: in.Port, URL: tok.URL, PathURL: path, ExpiresAt: tok.ExpiresAt.UTC().Format(time.RFC3339)}, nil
}
