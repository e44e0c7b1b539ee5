package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
)

// completions runs cobra's hidden __complete as a shell's script does and
// returns the words offered.
func completions(t *testing.T, env map[string]string, args ...string) []string {
	t.Helper()
	out := clitest.MustRun(t, env, append([]string{"__complete"}, args...)...)
	var words []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, ":") {
			words = append(words, strings.SplitN(line, "\t", 2)[0])
		}
	}
	return words
}

// TestCompletionFromTheServer: runtime and project arguments complete to
// the workspace's project names, --org and --ws to what the credential
// sees, and flags of fixed words to those words.
func TestCompletionFromTheServer(t *testing.T) {
	t.Parallel()
	_, env := cliOnServer(t, servertest.Options{})
	clitest.MustRun(t, env, "project", "create", "agent-1")
	clitest.MustRun(t, env, "project", "create", "web")
	projects := []string{"agent-1", "web"}
	for _, args := range [][]string{
		{"runtime", "start", ""}, {"exec", ""}, {"exec", "-w", "/tmp", ""}, {"port", "ls", ""},
		{"project", "rm", ""}, {"project", "rm", "web", ""}, {"shell", ""},
	} {
		if got := completions(t, env, args...); !slices.Equal(got, projects) {
			t.Errorf("complete %q: %q, want %q", args, got, projects)
		}
	}
	if got := completions(t, env, "attach", "web", ""); len(got) != 0 {
		t.Errorf("attach's second argument (a process) completes to %q", got)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"project", "create", "x", "--network", ""}, []string{"none", "proxy", "open"}},
		{[]string{"runtime", "set", "web", "--rootfs", ""}, []string{"readonly", "writable"}},
		{[]string{"sandbox", "ls", "-o", ""}, []string{"table", "json"}},
		{[]string{"member", "add", "x@example.com", "--role", ""}, []string{"viewer", "member", "admin", "owner"}},
		{[]string{"runtime", "ls", "--org", ""}, []string{"acme"}},
		{[]string{"runtime", "start", "--ws", ""}, []string{"dev"}},
	} {
		if got := completions(t, env, tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("complete %q: %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestBashCompletionWithoutThePackage loads the bash script in a bash that
// has no bash-completion package loaded, completes as bash would on a Tab,
// and gets the server's project names.
func TestBashCompletionWithoutThePackage(t *testing.T) {
	t.Parallel()
	srv, env := cliOnServer(t, servertest.Options{})
	clitest.MustRun(t, env, "project", "create", "agent-1")
	bin := testenv.Binary(t, "paddock")
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "paddock")); err != nil {
		t.Fatal(err)
	}
	script := clitest.MustRun(t, env, "completion", "bash")
	if err := os.WriteFile(filepath.Join(dir, "paddock.bash"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	const tab = `
source "$DIR/paddock.bash"
declare -F _init_completion >/dev/null && { echo "the bash-completion package is loaded"; exit 2; }
complete -p paddock >/dev/null || exit 3
COMP_LINE=$LINE
COMP_POINT=${#COMP_LINE}
# Split as bash splits a line (COMP_WORDBREAKS): at spaces, and at = and :.
read -ra COMP_WORDS <<<"$(sed 's/[=:]/ & /g' <<<"$COMP_LINE")"
[[ $COMP_LINE == *[[:space:]=:] ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__start_paddock 2>/dev/null  # compopt: not in a real completion here
printf '%s\n' "${COMPREPLY[@]}"
`
	for _, tt := range []struct{ line, want string }{
		{"paddock runtime start ", "agent-1"},
		// Split at = by bash, joined again: the flag's values.
		{"paddock runtime set agent-1 --network=", "none\nproxy\nopen"},
		{"paddock runtime set agent-1 --network=pr", "proxy"},
	} {
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", tab)
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + dir, "DIR=" + dir, "LINE=" + tt.line,
			"PADDOCK_URL=" + srv.URL, "PADDOCK_API_KEY=" + srv.Key, "PADDOCK_ORG=acme", "PADDOCK_WS=dev"}
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tt.want {
			t.Errorf("bash completion without the package of %q: %v\n%s", tt.line, err, out)
		}
	}
}
