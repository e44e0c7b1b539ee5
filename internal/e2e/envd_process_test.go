package e2e

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"

	procpb "github.com/paddockhq/paddock/internal/agentpb/envd/process"
	"github.com/paddockhq/paddock/internal/agentpb/envd/process/processconnect"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

// envdClient starts a sandbox of the default image through the Docker
// provider and returns an envd process client of its agent, speaking as
// the control plane forwards an e2b SDK's calls: Connect's JSON codec over
// the agent link's HTTP/2.
func envdClient(t *testing.T) processconnect.ProcessClient {
	t.Helper()
	testenv.RequireDocker(t, testenv.DefaultImage)
	instance := testenv.Instance(t)
	p := testenv.DockerProvider(t, instance)
	spec := provider.Spec{
		SandboxID: uuid.NewString(),
		RuntimeID: uuid.NewString(),
		OrgID:     uuid.NewString(),
		Instance:  instance,
		Image:     testenv.DefaultImage,
		Workspace: "pdkws-" + uuid.NewString(),
		Network:   provider.NetworkNone,
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	h, err := p.Create(ctx, spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := p.Start(ctx, h); err != nil {
		t.Fatalf("Start: %v", err)
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &protos, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return p.DialAgent(ctx, h)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return processconnect.NewProcessClient(&http.Client{Transport: tr}, "http://agent", connect.WithProtoJSON())
}

// TestEnvdRunsAsTheSandboxUser runs commands through the agent's envd as
// the e2b SDK's commands.run does: by default as the sandbox's user in its
// home, and as root when the call names it.
func TestEnvdRunsAsTheSandboxUser(t *testing.T) {
	c := envdClient(t)
	run := func(user, cmd string) (string, *procpb.ProcessEvent_EndEvent) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		req := connect.NewRequest(&procpb.StartRequest{
			Process: &procpb.ProcessConfig{Cmd: "/bin/bash", Args: []string{"-l", "-c", cmd}},
			Stdin:   new(false),
		})
		if user != "" {
			req.Header().Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":")))
		}
		req.Header().Set("Keepalive-Ping-Interval", "50")
		s, err := c.Start(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var (
			out strings.Builder
			end *procpb.ProcessEvent_EndEvent
		)
		for s.Receive() {
			ev := s.Msg().GetEvent()
			out.Write(ev.GetData().GetStdout())
			if ev.GetEnd() != nil {
				end = ev.GetEnd()
			}
		}
		if err := s.Err(); err != nil || end == nil {
			t.Fatalf("%s as %q: %v, end %v", cmd, user, err, end)
		}
		return out.String(), end
	}
	if out, end := run("", `echo "$(whoami) $(pwd) $HOME"`); end.ExitCode != 0 || out != "user /home/user /home/user\n" {
		t.Errorf("default user: %q, end %v", out, end)
	}
	if out, end := run("root", `echo "$(whoami) $(pwd) $HOME"`); end.ExitCode != 0 || out != "root /root /root\n" {
		t.Errorf("root: %q, end %v", out, end)
	}
	// E2B's base template has sudo; the agent serves it.
	if out, end := run("", "sudo whoami"); end.ExitCode != 0 || out != "root\n" {
		t.Errorf("sudo: %q, end %v", out, end)
	}
	if out, end := run("user", "python3 -c 'import sys; print(sys.version_info[0]); sys.exit(4)'"); end.ExitCode != 4 || out != "3\n" {
		t.Errorf("python3: %q, end %v", out, end)
	}
}
