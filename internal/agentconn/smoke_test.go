package agentconn_test

import (
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
)

func TestSmoke(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	if err := a.client.Health(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := a.client.Run(ctx, agentconn.ExecRequest{Argv: []string{"sh", "-c", "echo hi; echo err >&2; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%q %q %+v", res.Stdout, res.Stderr, res.Exit)
	_, err = a.client.Run(ctx, agentconn.ExecRequest{Argv: []string{"no-such-cmd"}})
	wantCode(t, err, errdefs.ErrNotFound, "command_not_found")
}
