package shim

import (
	"slices"
	"strings"
	"testing"
)

// TestToolsOnPath: every process the agent starts, exec and terminal
// alike, finds the capabilities' tools on PATH after the image's own
// directories; a caller's own PATH, or a cleared environment, is left as
// given.
func TestToolsOnPath(t *testing.T) {
	t.Setenv("PATH", "/usr/bin:/bin")
	path := func(env []string) (string, bool) {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				return v, true
			}
		}
		return "", false
	}
	for _, tt := range []struct {
		name     string
		req      map[string]string
		clear    bool
		injected map[string]string
		want     string
		wantNone bool
	}{
		{name: "the image's PATH", want: "/usr/bin:/bin:" + ToolsDir},
		{name: "an injected PATH", injected: map[string]string{"PATH": "/opt/bin"}, want: "/opt/bin:" + ToolsDir},
		{name: "once", injected: map[string]string{"PATH": ToolsDir + ":/bin"}, want: ToolsDir + ":/bin"},
		{name: "the caller's own PATH", req: map[string]string{"PATH": "/only"}, want: "/only"},
		{name: "a cleared environment", clear: true, wantNone: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env, err := buildEnv(tt.req, tt.clear, tt.injected, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := path(env)
			if tt.wantNone {
				if ok {
					t.Fatalf("PATH=%q in a cleared environment", got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("PATH=%q, want %q (env %v)", got, tt.want, slices.Clip(env))
			}
		})
	}
}
