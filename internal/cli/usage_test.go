package cli_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// anyKey is a well-formed API key for servers that do not check it.
const anyKey = "pdk_good"

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	a := startAPI(t, servertest.Options{})
	url, goodKey := a.URL, a.Key
	env := clitest.Env(url, goodKey)
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	noScope := clitest.Env(url, goodKey)
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		stderr string // a line stderr must contain
	}{
		{"unknown command", env, []string{"frobnicate"}, `unknown command "frobnicate" for "paddock"`},
		{"unknown verb", env, []string{"org", "crate"}, `unknown command "crate" for "paddock org"; did you mean "create"?`},
		{"unknown flag", env, []string{"org", "ls", "--bogus"}, "unknown flag: --bogus"},
		{"bad output", env, []string{"org", "ls", "-o", "yaml"}, `--output must be "table" or "json", not "yaml"`},
		{"missing argument", env, []string{"org", "create"}, "expected NAME, got 0 argument(s)"},
		{"extra argument", env, []string{"sandbox", "get", "a", "b"}, "expected SANDBOX, got 2 argument(s)"},
		{"arguments to ls", env, []string{"project", "ls", "x"}, `this command takes no arguments, got ["x"]`},
		{"no org", noScope, []string{"sandbox", "ls"}, "no org: pass --org"},
		{"no workspace", map[string]string{"PADDOCK_URL": url, "PADDOCK_API_KEY": goodKey, "PADDOCK_ORG": "acme"}, []string{"project", "ls"}, "no workspace: pass --ws"},
		{"no key", map[string]string{"PADDOCK_URL": url}, []string{"org", "ls"}, "no API key"},
		{"bad url", map[string]string{"PADDOCK_URL": "localhost:8080", "PADDOCK_API_KEY": goodKey}, []string{"org", "ls"}, "must start with http:// or https://"},
		{"bad cpu", env, []string{"project", "create", "p", "--cpu", "lots"}, `--cpu "lots"`},
		{"bad memory", env, []string{"project", "create", "p", "--memory", "1T"}, `--memory "1T"`},
		{"bad disk", env, []string{"project", "create", "p", "--disk", "huge"}, `--disk "huge"`},
		{"zero idle timeout", env, []string{"project", "create", "p", "--idle-timeout", "0s"}, "--idle-timeout must be a positive duration"},
		{"bad duration", env, []string{"runtime", "keepalive", "x", "--duration", "soon"}, `invalid argument "soon" for "--duration"`},
		{"negative duration", env, []string{"runtime", "keepalive", "x", "--duration", "-5s"}, "--duration must be a positive duration"},
		{"bad limit", env, []string{"sandbox", "ls", "--limit", "many"}, `invalid argument "many" for "--limit"`},
		{"login without a key", map[string]string{"PADDOCK_URL": url}, []string{"login"}, "no API key: pass --api-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := clitest.Run(t, tt.env, tt.args...)
			if code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cli.ExitUsage, out, errOut)
			}
			if !strings.HasPrefix(errOut, "error: ") || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("stderr = %q, want it to contain %q", errOut, tt.stderr)
			}
			if out != "" {
				t.Fatalf("stdout = %q", out)
			}
		})
	}
	if n := a.requests(); n != 0 {
		t.Fatalf("usage errors reached the server: %d requests", n)
	}
}

func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{nil, "Available Commands:"},
		{[]string{"org"}, "paddock org [command]"},
		{[]string{"runtime", "start", "--help"}, "--secret strings"},
		{[]string{"--version"}, "paddock "},
		{[]string{"version"}, "paddock "},
		{[]string{"version", "-o", "json"}, `"version":`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := clitest.Run(t, nil, tt.args...)
			if code != cli.ExitOK || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, tt.want)
			}
		})
	}
}

func TestServerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		stderr string
	}{
		{"api error", 402, "application/json", `{"code":"insufficient_credits","message":"the org has no credits left"}`,
			"error: the org has no credits left (insufficient_credits)\n"},
		{"internal error shows the request id", 500, "application/json", `{"code":"internal","message":"internal error","request_id":"abc123"}`,
			"error: internal error (internal)\nrequest id: abc123\n"},
		{"proxy html page", 502, "text/html", `<html><body>bad gateway</body></html>`,
			"error: Bad Gateway (unavailable)\n"},
		{"plain text", 503, "text/plain", "maintenance until noon\n",
			"error: maintenance until noon (unavailable)\n"},
		{"empty body", 401, "", "",
			"error: Unauthorized (unauthenticated)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			out, errOut, code := clitest.Run(t, clitest.Env(srv.URL, anyKey), "org", "ls")
			if code != cli.ExitError || errOut != tt.stderr || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want stderr %q", code, out, errOut, tt.stderr)
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, errOut, code := clitest.Run(t, clitest.Env(url, anyKey), "org", "ls")
	if code != cli.ExitError || !strings.HasPrefix(errOut, "error: cannot reach the paddock server at "+url+": ") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(errOut, anyKey) {
		t.Fatalf("the key leaked into %q", errOut)
	}
}

func TestBadKey(t *testing.T) {
	t.Parallel()
	a := startAPI(t, servertest.Options{})
	_, errOut, code := clitest.Run(t, clitest.Env(a.URL, "pdk_wrong"), "org", "ls")
	if code != cli.ExitError || errOut != "error: the API key is malformed, unknown, expired or revoked (invalid_api_key)\n" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestPaging(t *testing.T) {
	t.Parallel()
	a := startAPI(t, servertest.Options{})
	env := clitest.Env(a.URL, a.Key)
	for _, name := range []string{"a", "b", "c"} {
		clitest.MustRun(t, env, "org", "create", name)
		a.Clock.Advance(time.Second) // the order of creation is the order listed
	}
	// The cursors are the server's.
	next := func(limit string) string {
		return get[client.List[client.Org]](t, a, "/api/v1/orgs?limit="+limit).NextCursor
	}
	after2 := next("2")
	tests := []struct {
		args   []string
		names  []string
		stderr string
	}{
		{[]string{"org", "ls", "--limit", "2"}, []string{"a", "b"}, "more results: pass --cursor " + after2 + "\n"},
		{[]string{"org", "ls", "--limit", "2", "--cursor", after2}, []string{"c"}, ""},
		{[]string{"org", "ls"}, []string{"a", "b", "c"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := clitest.Run(t, env, tt.args...)
			if code != 0 || errOut != tt.stderr {
				t.Fatalf("exit %d, stderr %q, want %q", code, errOut, tt.stderr)
			}
			var names []string
			for _, row := range table(out)[1:] {
				names = append(names, row[1])
			}
			if strings.Join(names, ",") != strings.Join(tt.names, ",") {
				t.Fatalf("names = %v, want %v", names, tt.names)
			}
		})
	}
	// JSON carries the cursor in the body and says nothing on stderr.
	out, errOut, code := clitest.Run(t, env, "org", "ls", "--limit", "1", "-o", "json")
	if code != 0 || errOut != "" || !strings.Contains(out, `"next_cursor": "`+next("1")+`"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// An empty listing is still a JSON list.
	out = clitest.MustRun(t, env, "ws", "ls", "--org", "a", "-o", "json")
	if strings.Join(strings.Fields(out), "") != `{"items":[]}` {
		t.Fatalf("stdout %q", out)
	}
}
