// Package agentconn is the control plane's side of the link to the
// in-sandbox agent (paddock-shim): an HTTP/2 cleartext client over whatever
// byte stream a provider's dial function returns, speaking the agent
// protocol (api/agent/v1) through Connect, with Go wrappers for running
// processes, moving files and opening terminals.
//
// One Client holds one HTTP/2 connection, dialed on first use and redialed
// if it breaks; every call is a stream multiplexed on it, but for a large
// write, which takes a connection of its own (the byte path, see
// WriteFileWith), and Exec, which goes on a few connections of its own
// kept from call to call (the framed path, see agentpb.ExecFramesPath)
// when the agent has them. Errors are mapped
// to paddock's taxonomy (internal/errdefs) with stable public codes such as
// "file_not_found", "command_not_found" and "invalid_path"; an unreachable
// agent is errdefs.ErrUnavailable with the code "agent_unavailable".
package agentconn

import (
	"context"
	"net"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/agentpb/agentpbconnect"
)

// baseURL is what the client asks for; the dial function decides where the
// connection really goes.
const baseURL = "http://paddock-agent"

// chunkSize is the most data one message carries.
const chunkSize = 256 << 10

// maxMessageBytes bounds one protocol message.
const maxMessageBytes = 4 << 20

// Client talks to one sandbox's agent. It is safe for concurrent use.
type Client struct {
	transport *http.Transport
	agent     agentpbconnect.AgentServiceClient
	proc      agentpbconnect.ProcessServiceClient
	files     agentpbconnect.FileServiceClient
	term      agentpbconnect.TerminalServiceClient
	// dialBytes opens a connection of its own for Write's byte path
	// (see WithBytesDial).
	dialBytes func(ctx context.Context) (net.Conn, error)
	// execs are Exec's framed connections (agentpb.ExecFramesPath),
	// dialed as the byte path's are.
	execs       execConns
	envRequired bool // see WithEnvRequired
}

// An Option configures a Client.
type Option func(*Client)

// WithBytesDial has the client dial the connections of large writes'
// byte path (agentpb.WriteBytesPath) with dial rather than with New's,
// which may do more per connection than such a write needs (the control
// plane's sends the injected environment first). Each such connection
// carries one write and is closed after it.
func WithBytesDial(dial func(ctx context.Context) (net.Conn, error)) Option {
	return func(c *Client) { c.dialBytes = dial }
}

// WithEnvRequired has the client run processes only on an agent that has
// been given its environment (SetEnv) since it started, as the control
// plane's dial does on every connection before the client uses it. Exec's
// framed path, whose connections are dialed with WithBytesDial's dial,
// checks the agent's answer to its upgrade, and sends a call to an agent
// without one by ProcessService.Exec, whose dial gives it its environment
// first.
func WithEnvRequired() Option {
	return func(c *Client) { c.envRequired = true }
}

// New returns a Client whose connection is made by dial (for Docker: a unix
// socket in the sandbox's run directory). Nothing is dialed until the first
// call.
func New(dial func(ctx context.Context) (net.Conn, error), opts ...Option) *Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{
		Protocols: &p,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dial(ctx)
		},
		HTTP2: &http.HTTP2Config{
			MaxReceiveBufferPerConnection: 16 << 20,
			MaxReceiveBufferPerStream:     4 << 20,
			// The agent's frames as large as its read messages (1 MiB):
			// left at 0, Go asks for none and gets the protocol's 16 KiB.
			MaxReadFrameSize: 1 << 20,
			SendPingTimeout:  30 * time.Second,
			PingTimeout:      15 * time.Second,
		},
	}
	hc := &http.Client{Transport: tr}
	copts := []connect.ClientOption{
		connect.WithAcceptCompression("gzip", nil, nil), // a local stream gains nothing from it
		connect.WithReadMaxBytes(maxMessageBytes),
		connect.WithSendMaxBytes(maxMessageBytes),
	}
	c := &Client{
		transport: tr,
		agent:     agentpbconnect.NewAgentServiceClient(hc, baseURL, copts...),
		proc:      agentpbconnect.NewProcessServiceClient(hc, baseURL, copts...),
		files:     agentpbconnect.NewFileServiceClient(hc, baseURL, copts...),
		term:      agentpbconnect.NewTerminalServiceClient(hc, baseURL, copts...),
		dialBytes: dial,
		execs:     execConns{watch: keptWatch},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Close closes the idle connections. Calls in flight keep theirs until
// they end; cancel their contexts to end them first. Exec's framed
// connections are not kept after it: a call that ends later closes its
// own, and each call after it dials one of its own.
func (c *Client) Close() error {
	c.transport.CloseIdleConnections()
	c.closeIdleExecs(true)
	return nil
}

// Health reports whether the agent answers.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.Info(ctx)
	return err
}

// AgentInfo describes the agent.
type AgentInfo struct {
	Version   string
	PID       int // 1 when the agent is the sandbox's init
	StartedAt time.Time
}

// Info returns the agent's version and process identity.
func (c *Client) Info(ctx context.Context) (AgentInfo, error) {
	res, err := c.agent.Health(ctx, connect.NewRequest(&agentpb.HealthRequest{}))
	if err != nil {
		return AgentInfo{}, mapError(err)
	}
	return AgentInfo{
		Version:   res.Msg.Version,
		PID:       int(res.Msg.Pid),
		StartedAt: time.Unix(0, res.Msg.StartedAtUnixNano),
	}, nil
}

// SetEnv replaces the environment the agent injects into every process it
// starts from now on. The agent keeps it in memory only.
func (c *Client) SetEnv(ctx context.Context, env map[string]string) error {
	_, err := c.agent.SetEnv(ctx, connect.NewRequest(&agentpb.SetEnvRequest{Env: env}))
	return mapError(err)
}
