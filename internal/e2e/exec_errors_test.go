package e2e

import (
	"errors"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestExecCallerErrors: every way an exec can fail because of what its
// caller sent answers a 4xx with a stable code, collected and streamed,
// through the API on real Docker; none is a 500.
func TestExecCallerErrors(t *testing.T) {
	s := runningSandbox(t)
	ctx := bounded(t)
	s.run(t, "sh", "-c", `set -e
printf '\001\002\003 not a program' > /tmp/garbage && chmod +x /tmp/garbage
printf '#!/no/such/interpreter\n' > /tmp/orphan && chmod +x /tmp/orphan
ln -s /tmp/loop /tmp/loop`)
	// A program another process holds open for writing.
	_, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Background: true,
		Argv: []string{"sh", "-c", "cp /bin/busybox /tmp/busy && chmod +x /tmp/busy && exec 3>>/tmp/busy && touch /tmp/busy-open && exec sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "a writer holding /tmp/busy open", func() bool {
		res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"test", "-e", "/tmp/busy-open"}})
		return err == nil && res.Exit != nil && res.Exit.Code == 0
	})

	big := strings.Repeat("x", 900<<10)
	for _, c := range []struct {
		name   string
		req    pc.ExecRequest
		status int
		code   string
	}{
		{"missing command", pc.ExecRequest{Argv: []string{"no-such-command"}}, 404, "command_not_found"},
		{"missing path", pc.ExecRequest{Argv: []string{"/no/such/program"}}, 404, "command_not_found"},
		{"missing interpreter", pc.ExecRequest{Argv: []string{"/tmp/orphan"}}, 404, "command_not_found"},
		{"a file as a directory (ENOTDIR)", pc.ExecRequest{Argv: []string{"/etc/passwd/x"}}, 404, "command_not_found"},
		{"not executable (EACCES)", pc.ExecRequest{Argv: []string{"/etc/passwd"}}, 403, "command_not_executable"},
		{"a directory", pc.ExecRequest{Argv: []string{"/tmp"}}, 403, "command_not_executable"},
		{"not a program (ENOEXEC)", pc.ExecRequest{Argv: []string{"/tmp/garbage"}}, 422, "exec_format_error"},
		{"a symlink loop (ELOOP)", pc.ExecRequest{Argv: []string{"/tmp/loop"}}, 422, "too_many_symlinks"},
		{"a name too long (ENAMETOOLONG)", pc.ExecRequest{Argv: []string{"/tmp/" + strings.Repeat("n", 300)}}, 400, "invalid_command"},
		{"a 900 KiB argument (E2BIG)", pc.ExecRequest{Argv: []string{"echo", big}}, 400, "argument_list_too_long"},
		{"a 900 KiB variable (E2BIG)", pc.ExecRequest{Argv: []string{"true"}, Env: map[string]string{"BIG": big}}, 400, "argument_list_too_long"},
		{"open for writing (ETXTBSY)", pc.ExecRequest{Argv: []string{"/tmp/busy", "true"}}, 409, "text_file_busy"},
		{"missing cwd", pc.ExecRequest{Argv: []string{"true"}, Cwd: "/no/such/dir"}, 400, "invalid_cwd"},
		{"cwd is a file", pc.ExecRequest{Argv: []string{"true"}, Cwd: "/etc/passwd"}, 400, "invalid_cwd"},
		{"relative cwd", pc.ExecRequest{Argv: []string{"true"}, Cwd: "tmp"}, 400, "invalid_path"},
		{"bad variable name", pc.ExecRequest{Argv: []string{"true"}, Env: map[string]string{"A=B": "c"}}, 400, "invalid_env"},
		{"NUL in an argument", pc.ExecRequest{Argv: []string{"echo", "a\x00b"}}, 400, "invalid_command"},
		{"no command", pc.ExecRequest{Argv: []string{}}, 400, "invalid_command"},
		{"negative timeout", pc.ExecRequest{Argv: []string{"true"}, TimeoutMS: -1}, 400, "invalid_timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.code == "text_file_busy" && runtimeUnderTest(t) == testenv.GVisorRuntime {
				t.Skip("gVisor's kernel does not refuse to run a file open for writing (no ETXTBSY)")
			}
			for _, streamed := range []bool{false, true} {
				var err error
				if streamed {
					var st *pc.ExecStream
					if st, err = s.sdk.ExecStream(ctx, "acme", "dev", s.rid, c.req); st != nil {
						st.Close()
					}
				} else {
					_, err = s.sdk.Exec(ctx, "acme", "dev", s.rid, c.req)
				}
				var apiErr *pc.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != c.status || apiErr.Code != c.code {
					t.Fatalf("streamed=%v: %v, want %d %s", streamed, err, c.status, c.code)
				}
			}
		})
	}
	// The sandbox is unharmed.
	if got := s.run(t, "echo", "ok"); got != "ok\n" {
		t.Fatalf("after the errors: %q", got)
	}
}

// runtimeUnderTest names the OCI runtime the end-to-end tests run on (""
// for the engine's default).
func runtimeUnderTest(t testing.TB) string {
	_, runtime := testenv.TestProvider(t)
	return runtime
}

// readOnlyRootRefusal is the code and kind of the refusal of a write
// through the API to the read-only root, which is not the user's either:
// Linux checks the mount first (read_only_filesystem), gVisor's kernel the
// permission (permission_denied).
func readOnlyRootRefusal(t testing.TB) (string, error) {
	if runtimeUnderTest(t) == testenv.GVisorRuntime {
		return "permission_denied", pc.ErrPermissionDenied
	}
	return "read_only_filesystem", pc.ErrFailedPrecondition
}
