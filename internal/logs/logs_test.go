package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestContextIDsAndBook(t *testing.T) {
	var buf bytes.Buffer
	book := &Book{PerSandbox: 2, Sandboxes: 2}
	l := New(&buf, "json", slog.LevelInfo, book).With("instance", "i1")
	ctx := With(With(context.Background(), KeyRequest, "r1"), KeyRuntime, "rt1")

	l.InfoContext(ctx, "one", "sandbox", "sb1")
	l.InfoContext(ctx, "two", "runtime", "rt1", "sandbox", "sb1") // runtime twice: logged once
	l.InfoContext(With(ctx, KeySandbox, "sb1"), "three")
	l.InfoContext(ctx, "other", "sandbox", "sb2")
	l.InfoContext(ctx, "third sandbox", "sandbox", "sb3") // sb1 is the least recent: dropped
	l.InfoContext(context.Background(), "no ids")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6:\n%s", len(lines), buf.String())
	}
	if strings.Count(lines[1], `"runtime"`) != 1 {
		t.Fatalf("a key repeated: %s", lines[1])
	}
	var rec map[string]string
	if err := json.Unmarshal([]byte(lines[2]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["request_id"] != "r1" || rec["runtime"] != "rt1" || rec["sandbox"] != "sb1" || rec["instance"] != "i1" {
		t.Fatalf("record = %v, want the context's ids and the logger's", rec)
	}
	if got := book.Of("sb1"); got != nil {
		t.Fatalf("sb1 kept %d entries after two other sandboxes were logged about; want none", len(got))
	}
	if got := book.Of("sb3"); len(got) != 1 || got[0].Message != "third sandbox" || got[0].Attrs["request_id"] != "r1" {
		t.Fatalf("sb3's book = %+v", got)
	}
	// Per sandbox only the last PerSandbox records are kept.
	for _, m := range []string{"a", "b", "c"} {
		l.Info(m, "sandbox", "sb2")
	}
	if got := book.Of("sb2"); len(got) != 2 || got[0].Message != "b" || got[1].Message != "c" {
		t.Fatalf("sb2's book = %+v, want b and c", got)
	}
}
