package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestMCPOverStdio: `paddock mcp` answers MCP's JSON-RPC on stdin with
// the CLI's server and key, its --org and --ws the tools' defaults, and
// ends when stdin does.
func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	f := startAPI(t, servertest.Options{})
	f.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	f.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	f.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "agent"})
	stdin := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_runtimes","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"start_runtime","arguments":{"runtime":"nope"}}}`,
	}, "\n") // the last line without its newline
	out, errOut, code := clitest.RunInput(t, clitest.Env(f.URL, f.Key), stdin, "mcp", "--org", "acme", "--ws", "dev")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	answers := map[int]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Result == nil {
			t.Fatalf("line %q: %v", line, err)
		}
		answers[m.ID] = m.Result
	}
	var list struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Runtimes []struct{ Project, Status string } `json:"runtimes"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(answers[2], &list); err != nil || list.IsError || len(list.StructuredContent.Runtimes) != 1 ||
		list.StructuredContent.Runtimes[0].Project != "agent" {
		t.Fatalf("list_runtimes answered %s (%v)", answers[2], err)
	}
	if !strings.Contains(string(answers[3]), `"isError":true`) || !strings.Contains(string(answers[3]), "project_not_found: ") {
		t.Fatalf("start_runtime of an unknown project answered %s", answers[3])
	}
}
