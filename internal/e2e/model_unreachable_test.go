package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	pc "github.com/paddockhq/paddock/pkg/client"

	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestTurnModelUnreachable: in a proxy sandbox whose rules keep the
// harness from its model's host, the stand-in CLIs try to reach it through
// the proxy and, like the real ones, retry for as long as they are let. The
// turn ends as model_unreachable naming the host and the rule, not at its
// ten-minute timeout (the test's deadline is shorter than that): Claude
// Code with no allow rule for api.anthropic.com, stopped while it retries,
// then OpenCode with a deny rule for it, which gives up by itself at once
// and still ends as model_unreachable. Nothing reaches the host: the proxy
// refuses the tunnel.
func TestTurnModelUnreachable(t *testing.T) {
	const key = "pdk_00000000000000000000000000000000000000000000a7c1"
	_, c := serveWithEgress(t, key)
	ctx := t.Context()
	if _, err := c.CreateSecret(ctx, "acme", "dev", pc.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-ant-test"}); err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "agent", Runtime: &pc.RuntimeConfig{
		Image: testenv.TestImage, MemoryMB: 256,
		Network: &pc.NetworkPolicy{Mode: pc.NetworkProxy, Allow: []string{"pypi.org"}},
		Secrets: []string{"anthropic"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}

	turn := func(t *testing.T, harness, want string) {
		t.Helper()
		// Far less than the turn's timeout: only the new path ends it in
		// time.
		ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
		defer cancel()
		res, err := c.Prompt(ctx, "acme", "dev", p.RuntimeID, pc.PromptRequest{
			Prompt: "please answer [model]", Harness: harness, TimeoutSeconds: 600,
		})
		if err != nil {
			t.Fatal(err)
		}
		// The turn's error is the last error event (OpenCode reports the
		// refused tunnel itself first, and gives up).
		var got *pc.TurnError
		for _, e := range res.Events {
			if e.Type == pc.SessionEventError {
				got = e.Error
			}
		}
		if got == nil || got.Code != session.CodeModelUnreachable || res.Error != got.Message {
			t.Fatalf("turn error %+v (result error %q), want %s", got, res.Error, session.CodeModelUnreachable)
		}
		for _, w := range []string{"api.anthropic.com:443", want} {
			if !strings.Contains(got.Message, w) {
				t.Errorf("message %q does not say %q", got.Message, w)
			}
		}
		if res.Session.Status != pc.SessionFailed {
			t.Errorf("session status %s, want failed", res.Session.Status)
		}
	}
	t.Run("claude-code, not allowed", func(t *testing.T) {
		turn(t, "claude-code", "not allowed (no allow rule matches)")
	})
	t.Run("opencode, denied", func(t *testing.T) {
		deny := []string{"api.anthropic.com"}
		if _, err := c.ConfigureRuntime(ctx, "acme", "dev", p.RuntimeID, pc.RuntimePatch{Network: &pc.NetworkPatch{Deny: &deny}}); err != nil {
			t.Fatal(err)
		}
		turn(t, "opencode", "denied by rule api.anthropic.com")
	})
}
