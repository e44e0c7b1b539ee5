package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
)

// AgentTransport speaks HTTP/2 cleartext with prior knowledge, as the
// agent does, over the streams dial opens (each already verified as the
// agent's by the provider).
func AgentTransport(dial func(ctx context.Context) (net.Conn, error)) *http.Transport {
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	return &http.Transport{
		Protocols:   &protos,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
	}
}

// ProbeAgent asks the agent behind hc (over an AgentTransport) for GET
// /healthz once: nil when it answers 200 over HTTP/2.
func ProbeAgent(ctx context.Context, hc *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://agent/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	switch {
	case resp.ProtoMajor != 2:
		return errors.New("the agent did not answer over HTTP/2")
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("agent health: status %d", resp.StatusCode)
	}
	return nil
}
