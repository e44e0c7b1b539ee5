package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestStdioAnswersBeforeItEnds: when its input ends, the stdio server
// answers every request it read first (ids of any spelling), a cancelled
// one included, then ends.
func TestStdioAnswersBeforeItEnds(t *testing.T) {
	e := newEnv(t)
	id := e.startedRuntime(t, "box")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"runtime":"` + id + `","command":"sleep 600"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		`{"jsonrpc":"2.0","id":4.0,"method":"tools/call","params":{"name":"list_runtimes","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"exec","arguments":{"runtime":"box","argv":["echo","answered"]}}}`,
	}, "\n")
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	var out bytes.Buffer
	err := mcp.ServeStdio(ctx, e.sdkClient(t, e.member.Key), mcp.Options{Org: "acme", Workspace: "dev"}, strings.NewReader(in), &out)
	if err != nil || ctx.Err() != nil {
		t.Fatalf("ServeStdio: %v (%v)\n%s", err, ctx.Err(), out.String())
	}
	answered := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		answered[string(m.ID)] = string(m.Result)
	}
	if _, ok := answered["1"]; !ok || !strings.Contains(answered[`"three"`], `"stdout":"answered\n"`) {
		t.Fatalf("answers: %v", answered)
	}
}
