package session

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/store"
)

// storedEvents are a turn's events and, for each, the body a transcript
// row kept before its shape had a version (v0: the SDK's SessionEvent
// marshalled). Version 1 is the same fields after "v":1.
func storedEvents() ([]harness.Event, []string) {
	events := []harness.Event{
		{Type: harness.EventMessage, Role: "user", Text: "list the files"},
		{Type: harness.EventToolCall, Tool: &harness.ToolCall{ID: "tu_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
		{Type: harness.EventToolResult, Result: &harness.ToolResult{ID: "tu_1", Output: "a.go\n"}},
		{Type: harness.EventMessage, Role: "assistant", Text: "one file: a.go"},
		{Type: harness.EventUsage, Usage: &harness.TurnUsage{InputTokens: 120, OutputTokens: 30, CacheReadTokens: 100, CostUSD: 0.0125}},
		{Type: harness.EventError, Error: &harness.TurnError{Code: "harness_failed", Message: "it broke"}},
		{Type: harness.EventDone, Done: &harness.TurnDone{ExitCode: 1, HarnessSessionID: "h-1", Result: "one file: a.go"}},
	}
	at := time.Date(2026, 11, 20, 9, 30, 0, 123456000, time.UTC)
	for i := range events {
		events[i].Seq, events[i].Turn, events[i].Time = int64(i+1), 1, at
	}
	return events, []string{
		`{"seq":1,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"message","role":"user","text":"list the files"}`,
		`{"seq":2,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"tool_call","tool":{"id":"tu_1","name":"Bash","input":{"command":"ls"}}}`,
		`{"seq":3,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"tool_result","result":{"id":"tu_1","output":"a.go\n","is_error":false}}`,
		`{"seq":4,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"message","role":"assistant","text":"one file: a.go"}`,
		`{"seq":5,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"usage","usage":{"input_tokens":120,"output_tokens":30,"cache_read_tokens":100,"cost_usd":0.0125}}`,
		`{"seq":6,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"error","error":{"code":"harness_failed","message":"it broke"}}`,
		`{"seq":7,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"done","done":{"exit_code":1,"harness_session_id":"h-1","result":"one file: a.go"}}`,
	}
}

// TestEventStoredShape: a transcript row is written in the shape of
// version 1, field names and all, whatever the SDK's are; rows of version
// 1 and of before versions read back the same; a newer version is an
// error, never a silently wrong event.
func TestEventStoredShape(t *testing.T) {
	events, v0 := storedEvents()
	for i, e := range events {
		v1 := `{"v":1,` + v0[i][1:]
		got, err := encodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != v1 {
			t.Errorf("stored event\n got %s\nwant %s", got, v1)
		}
		for _, body := range []string{v0[i], v1} {
			back, err := decodeEvent(store.SessionEvent{SessionID: "s", Seq: e.Seq, Body: []byte(body)})
			if err != nil || !reflect.DeepEqual(back, e) {
				t.Errorf("%s read as %+v, %v", body, back, err)
			}
		}
	}
	_, err := decodeEvent(store.SessionEvent{SessionID: "s", Seq: 1, Body: []byte(`{"v":2,` + v0[0][1:])})
	if err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("a newer version: %v", err)
	}
}
