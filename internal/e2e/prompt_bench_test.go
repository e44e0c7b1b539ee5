package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// BenchmarkPrompt measures one turn of the stand-in Claude Code through
// the API — the credential and CLI checks, the session row, the stream
// parsed into events, each event kept in the transcript — in a new session
// and continuing one, against running the same command with `docker exec`
// on the same container, which does none of that.
func BenchmarkPrompt(b *testing.B) {
	env, docker, p, rtPath := dockerEnv(b)
	env.Must(b, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", pc.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-bench"})
	env.Must(b, 200, "PATCH", rtPath, pc.RuntimePatch{Secrets: &[]string{"anthropic"}})
	s := startSandbox(b, env, docker, p, rtPath)
	ctx := context.Background()
	var apiMedian float64
	b.Run("api", func(b *testing.B) {
		apiMedian = testenv.BenchLatency(b, func() error {
			res, err := s.sdk.Prompt(ctx, "acme", "dev", s.rid, pc.PromptRequest{Prompt: "list the workspace"})
			if err == nil && res.Error != "" {
				err = fmt.Errorf("turn failed: %s", res.Error)
			}
			return err
		})
	})
	first, err := s.sdk.Prompt(ctx, "acme", "dev", s.rid, pc.PromptRequest{Prompt: "start"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("api-resume", func(b *testing.B) {
		testenv.BenchLatency(b, func() error {
			res, err := s.sdk.Prompt(ctx, "acme", "dev", s.rid, pc.PromptRequest{Prompt: "go on", SessionID: first.Session.ID})
			if err == nil && res.Error != "" {
				err = fmt.Errorf("turn failed: %s", res.Error)
			}
			return err
		})
	})
	h, _ := harness.Lookup("claude-code")
	argv, henv := h.Command(harness.Invocation{Prompt: "list the workspace", Workdir: "/workspace", CapRoot: capability.Root})
	direct := []string{"env", "ANTHROPIC_API_KEY=sk-bench", "HOME=/workspace"}
	for k, v := range henv {
		direct = append(direct, k+"="+v)
	}
	direct = append(direct, argv...)
	b.Run("docker-exec", func(b *testing.B) {
		median := testenv.BenchLatency(b, func() error { return testenv.DockerExec(s.cid, direct...) })
		if apiMedian > 0 {
			b.ReportMetric(median/apiMedian, "x-api")
		}
	})
}
