package session

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/harness"
)

func TestTitle(t *testing.T) {
	if got := title("  fix\nthe   tests  "); got != "fix the tests" {
		t.Fatalf("title %q", got)
	}
	long := strings.Repeat("é", 100)
	got := title(long)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > 80+len("…") {
		t.Fatalf("long title %q", got)
	}
}

// A harness's output is the sandbox's to choose: an event keeps at most
// maxEventText of each text, cut on a rune boundary, and a tool input cut
// stays JSON.
func TestBound(t *testing.T) {
	big := strings.Repeat("ü", maxEventText)
	e := harness.Event{
		Type: harness.EventToolCall, Text: big,
		Tool:   &harness.ToolCall{ID: "t", Name: "bash", Input: json.RawMessage(`"` + strings.Repeat("x", maxEventText+10) + `"`)},
		Result: &harness.ToolResult{Output: big},
		Error:  &harness.TurnError{Message: big},
		Done:   &harness.TurnDone{Result: big},
	}
	bound(&e)
	for name, s := range map[string]string{"text": e.Text, "output": e.Result.Output, "error": e.Error.Message, "result": e.Done.Result} {
		if !utf8.ValidString(s) || len(s) > maxEventText+100 || !strings.Contains(s, "cut: the text was") {
			t.Errorf("%s: %d bytes, valid %v", name, len(s), utf8.ValidString(s))
		}
	}
	if !json.Valid(e.Tool.Input) || len(e.Tool.Input) > maxEventText+200 {
		t.Errorf("tool input: %d bytes, valid JSON %v", len(e.Tool.Input), json.Valid(e.Tool.Input))
	}
	small := harness.Event{Type: harness.EventMessage, Text: "hi"}
	bound(&small)
	if small.Text != "hi" {
		t.Errorf("a small text changed: %q", small.Text)
	}
}
