package client

import "time"

// Port is a TCP port of a runtime's sandbox: listening now or marked
// public, and the URLs that reach it through the control plane.
type Port struct {
	Port      int    `json:"port"`
	Listening bool   `json:"listening"`
	Public    bool   `json:"public"`
	Address   string `json:"address,omitempty"` // what it listens on
	PID       int    `json:"pid,omitempty"`
	Command   string `json:"command,omitempty"`
	// URL is the preview URL (P-<runtime short id>.<preview domain>);
	// PathURL the same port under the API's path.
	URL     string `json:"url"`
	PathURL string `json:"path_url"`
}

// SetPortRequest marks a port public (no key or token needed) or private.
type SetPortRequest struct {
	Public bool `json:"public"`
}

// PreviewTokenRequest asks for a preview token; TTL is a duration such as
// "1h" (default 1h, at most 24h).
type PreviewTokenRequest struct {
	TTL string `json:"ttl,omitempty"`
}

// PreviewToken is a signed, expiring token for one port of one runtime.
// It is accepted as the X-Paddock-Preview-Token header, as ?token= (a
// first visit sets a cookie so that a tab or an iframe keeps working), or
// as that cookie. URL carries it.
type PreviewToken struct {
	Token     string    `json:"token"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}
