package agentconn_test

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
)

// TestSetEnv: the injected environment reaches every process the agent
// starts, after its own and before the call's, survives clear_env, is
// replaced whole by the next SetEnv, and refuses malformed variables.
func TestSetEnv(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	run := func(req agentconn.ExecRequest) string {
		t.Helper()
		res, err := a.client.Run(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	show := []string{"/bin/sh", "-c", `echo "$INJECTED|$OVERRIDDEN|$GONE"`}
	if err := a.client.SetEnv(ctx, map[string]string{"INJECTED": "secret value", "OVERRIDDEN": "injected", "GONE": "first"}); err != nil {
		t.Fatal(err)
	}
	if got := run(agentconn.ExecRequest{Argv: show, Env: map[string]string{"OVERRIDDEN": "call"}}); got != "secret value|call|first" {
		t.Fatalf("injected, the call's wins: %q", got)
	}
	if got := run(agentconn.ExecRequest{Argv: show, ClearEnv: true}); got != "secret value|injected|first" {
		t.Fatalf("with clear_env: %q", got)
	}
	if err := a.client.SetEnv(ctx, map[string]string{"INJECTED": "second"}); err != nil {
		t.Fatal(err)
	}
	if got := run(agentconn.ExecRequest{Argv: show}); got != "second||" {
		t.Fatalf("replaced whole: %q", got)
	}
	for name, env := range map[string]map[string]string{
		"equals in a name": {"A=B": "c"},
		"NUL in a value":   {"A": "b\x00c"},
		"empty name":       {"": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			wantCode(t, a.client.SetEnv(ctx, env), errdefs.ErrInvalidArgument, "invalid_env")
		})
	}
	if got := run(agentconn.ExecRequest{Argv: show}); got != "second||" {
		t.Fatalf("a refused SetEnv changed the environment: %q", got)
	}
}
