package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/harness"
)

func TestHarnessInfo(t *testing.T) {
	h, _ := harness.Lookup("claude-code")
	info := harnessInfo(h)
	if info.Name != h.Name || info.Binary != "claude" || info.WrittenAgainst != h.WrittenAgainst || !reflect.DeepEqual(info.Secrets, h.Secrets) {
		t.Errorf("harnessInfo() = %+v", info)
	}
}

// sameJSON fails unless domain and wire marshal to the same bytes.
func sameJSON(t *testing.T, domain, wire any) {
	t.Helper()
	d, err := json.Marshal(domain)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	if string(d) != string(w) {
		t.Errorf("the wire differs from the domain\nwire   %s\ndomain %s", w, d)
	}
}

// TestConversionsKeepEveryField: what the API shows of a transcript event,
// a binding status and inventory contents is the domain value field for
// field, every field set, so a stream or a listing answers the same bytes
// as when the SDK's types were the domain's.
func TestConversionsKeepEveryField(t *testing.T) {
	at := time.Date(2026, 11, 20, 9, 30, 0, 123456000, time.UTC)
	for _, e := range []harness.Event{
		{Seq: 1, Turn: 2, Time: at, Type: harness.EventMessage, Role: "assistant", Text: "hi"},
		{Seq: 2, Turn: 2, Time: at, Type: harness.EventToolCall, Tool: &harness.ToolCall{ID: "t", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
		{Seq: 3, Turn: 2, Time: at, Type: harness.EventToolResult, Result: &harness.ToolResult{ID: "t", Output: "a\n", IsError: true}},
		{Seq: 4, Turn: 2, Time: at, Type: harness.EventUsage, Usage: &harness.TurnUsage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CostUSD: 0.5}},
		{Seq: 5, Turn: 2, Time: at, Type: harness.EventError, Error: &harness.TurnError{Code: "c", Message: "m"}},
		{Seq: 6, Turn: 2, Time: at, Type: harness.EventDone, Done: &harness.TurnDone{ExitCode: 1, HarnessSessionID: "h", Result: "r"}},
	} {
		sameJSON(t, e, sessionEventOut(e))
	}
	code := 3
	st := binding.Status{State: binding.StateFailed, Error: "e", SandboxID: "sb", AppliedAt: &at,
		Setup:   []binding.StepResult{{Name: "s", OK: true, ExitCode: 1, Output: "o", DurationMS: 2, RanAt: at}},
		Checks:  []binding.StepResult{},
		Workers: []binding.WorkerStatus{{Name: "w", ProcessID: "p", State: binding.WorkerExited, ExitCode: &code, StartedAt: &at, Output: "x"}}}
	sameJSON(t, st, statusOut(st))
	sameJSON(t, binding.Status{State: binding.StatePending}, statusOut(binding.Status{State: binding.StatePending}))
	c := binding.Contents{Agents: []string{"a"}, Skills: []string{}, Tools: []string{"t"}, MCPServers: []string{"m"}, Workers: []string{"w"},
		Setup: []string{"s"}, Checks: []string{"c"}, Flags: []binding.Flag{{Name: "f", Description: "d", Default: true}}}
	sameJSON(t, c, contentsOut(c))
	sameJSON(t, binding.Contents{}, contentsOut(binding.Contents{}))
}
