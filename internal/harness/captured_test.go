package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/harness/harnesstest"
)

// The captured-<version>-<case>.stdout and .stderr files in testdata are
// what the real CLIs printed, pinned as in scripts/build-images.sh, for the
// paths that need no model (see testdata/CAPTURED.md for how they were
// made). The parsers must read them, and the stand-ins must print the same.

// capturedResumeID is the unknown session id the captures resumed.
const capturedResumeID = harnesstest.ResumeID

// captured reads one captured run: stdout, stderr.
func captured(t *testing.T, h *Harness, name string) (string, string) {
	t.Helper()
	base := filepath.Join("testdata", h.Name, "captured-"+h.WrittenAgainst+"-"+name)
	stdout, err := os.ReadFile(base + ".stdout")
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.ReadFile(base + ".stderr")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(stdout), string(stderr)
}

// parseOutput runs stdout and stderr of one run through h's parser.
func parseOutput(h *Harness, stdout, stderr string, exitCode int) []Event {
	p := h.NewParser()
	var events []Event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		events = append(events, p.Feed(sc.Bytes())...)
	}
	return append(events, p.Finish(exitCode, stderr)...)
}

func firstError(events []Event) *TurnError {
	for _, e := range events {
		if e.Type == EventError {
			return e.Error
		}
	}
	return nil
}

// TestCapturedOutputs parses what the real CLIs printed.
func TestCapturedOutputs(t *testing.T) {
	tests := []struct {
		harness, name string
		code, message string
	}{
		{"claude-code", "resume-unknown", CodeSessionNotFound, "No conversation found with session ID: " + capturedResumeID},
		{"claude-code", "proxy-refused", "server_error", "API Error: Couldn't connect through your proxy (ERR_PROXY_TUNNEL) — the proxy refused the tunnel: check its credentials and that it allows this host"},
		{"claude-code", "no-credentials", CodeUnauthenticated, "Not logged in · Please run /login (claude needs one of ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN)"},
		{"codex", "resume-unknown", CodeSessionNotFound, "Error: thread/resume: thread/resume failed: no rollout found for thread id " + capturedResumeID + " (code -32600)"},
		{"opencode", "resume-unknown", CodeSessionNotFound, "Error: Session not found"},
		{"gemini", "resume-unknown", CodeSessionNotFound, "Error resuming session: No previous sessions found for this project."},
		{"gemini", "no-credentials", CodeUnauthenticated, "GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA"},
		{"kimi", "resume-unknown", CodeSessionNotFound, `Session "session_` + capturedResumeID + `" not found.`},
		{"kimi", "no-credentials", CodeUnauthenticated, "provider __kimi_env__ has no credential configured (kimi needs one of KIMI_MODEL_API_KEY)"},
	}
	for _, tt := range tests {
		t.Run(tt.harness+"/"+tt.name, func(t *testing.T) {
			h, _ := Lookup(tt.harness)
			stdout, stderr := captured(t, h, tt.name)
			events := parseOutput(h, stdout, stderr, 1)
			e := firstError(events)
			if e == nil {
				t.Fatalf("no error event in %+v", events)
			}
			if e.Code != tt.code || !strings.HasSuffix(e.Message, tt.message) {
				t.Errorf("error %+v, want %s ending in %q", e, tt.code, tt.message)
			}
		})
	}
}

// TestStandinsPrintWhatTheCLIsPrint runs the stand-ins on the captured
// paths and compares: the same stderr line, and on stdout the same lines
// with the same fields (ids and timings aside).
func TestStandinsPrintWhatTheCLIsPrint(t *testing.T) {
	for _, name := range []string{"claude-code", "codex", "opencode", "gemini", "kimi"} {
		h, _ := Lookup(name)
		t.Run(name, func(t *testing.T) {
			s := newSandbox(t, h)
			r := s.run(t, s.invocation("hello", harnesstest.UnknownResumeID(name)), false, nil)
			wantOut, wantErr := captured(t, h, "resume-unknown")
			if want := map[string]int{"gemini": 42}[name]; want != 0 && r.exitCode != want {
				t.Errorf("exit %d, want %d as the real CLI", r.exitCode, want)
			}
			if r.exitCode != 1 && name != "gemini" {
				t.Errorf("exit %d, want 1 as the real CLI", r.exitCode)
			}
			if got, want := lastLines(asRoot(r.stderr, s.home), 1), lastLines(wantErr, 1); got != want {
				t.Errorf("stderr ends %q, the real CLI's %q", got, want)
			}
			// The colour codes too, as the real CLI prints them.
			if strings.Contains(wantErr, "\x1b[") && !strings.Contains(r.stderr, "\x1b[") {
				t.Errorf("stderr %q lacks the real CLI's colour codes", r.stderr)
			}
			sameLines(t, r.stdout, wantOut, "type", "subtype", "is_error", "errors", "session_id")
		})
	}
	for _, name := range []string{"claude-code", "gemini", "kimi"} {
		h, _ := Lookup(name)
		t.Run(name+"/no credentials", func(t *testing.T) {
			s := newSandbox(t, h)
			r := s.run(t, s.invocation("hello", ""), true, nil)
			wantOut, wantErr := captured(t, h, "no-credentials")
			if r.exitCode != map[string]int{"claude-code": 1, "gemini": 41, "kimi": 1}[name] {
				t.Errorf("exit %d, not the real CLI's", r.exitCode)
			}
			if got, want := lastLines(asRoot(r.stderr, s.home), 2), lastLines(wantErr, 2); got != want {
				t.Errorf("stderr ends %q, the real CLI's %q", got, want)
			}
			fields := []string{"type", "subtype", "role", "version", "is_error", "result", "error", "apiKeySource"}
			if name == "claude-code" {
				sameFields(t, r.stdout, wantOut, fields...)
				return
			}
			sameLines(t, r.stdout, wantOut, fields...)
		})
	}
	t.Run("versions", func(t *testing.T) {
		for _, name := range []string{"claude-code", "codex", "opencode", "gemini", "kimi"} {
			h, _ := Lookup(name)
			want, _ := os.ReadFile(filepath.Join("testdata", name, "captured-"+h.WrittenAgainst+"-version.stdout"))
			out, err := exec.Command(filepath.Join(standinDir, h.Binary), "--version").Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(strings.TrimSpace(string(out)), versionSuffixForTest); got != strings.TrimSpace(string(want)) {
				t.Errorf("%s --version: %q, the real CLI's %q", name, got, want)
			}
		}
	})
}

// asRoot writes the stand-in's HOME as the captures' (/root).
func asRoot(s, home string) string { return strings.ReplaceAll(s, home, "/root") }

// versionSuffixForTest is what the stand-ins add to the real version.
const versionSuffixForTest = " (paddock stand-in)"

// sameLines compares JSON lines by their keys and by the values of fields,
// which do not change from run to run.
func sameLines(t *testing.T, got, want string, fields ...string) {
	t.Helper()
	g, w := sameFields(t, got, want, fields...)
	for i := range w {
		for k := range w[i] {
			if _, ok := g[i][k]; !ok {
				t.Errorf("line %d lacks %q", i, k)
			}
		}
	}
}

// sameFields compares JSON lines by the values of fields only (Claude
// Code's lines carry dozens of keys no parser reads), and returns them.
func sameFields(t *testing.T, got, want string, fields ...string) (g, w []map[string]any) {
	t.Helper()
	g, w = jsonLines(t, got), jsonLines(t, want)
	if len(g) != len(w) {
		t.Fatalf("%d stdout lines, the real CLI printed %d:\n%s", len(g), len(w), got)
	}
	for i := range w {
		for _, k := range fields {
			gv, _ := json.Marshal(g[i][k])
			wv, _ := json.Marshal(w[i][k])
			if !bytes.Equal(gv, wv) {
				t.Errorf("line %d %s: %s, the real CLI's %s", i, k, gv, wv)
			}
		}
	}
	return g, w
}

// field is the JSON of the value at a dotted path in v.
func field(v any, path string) string {
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}
