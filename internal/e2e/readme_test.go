package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

// readmeMarker is the comment before a README block that the test does not
// run as it is: `skip (reason)`, a block it does not run; `server`, a block
// that starts the server, whose settings the test's own server takes;
// `pty (what it types)`, a block that ends in an interactive command, run
// in a terminal (script, of util-linux) that types exit.
var readmeMarker = regexp.MustCompile(`^<!-- readme-test: (skip|server|pty)(?: \((.+)\))? -->$`)

// readmeBlock is one ```sh block of README.md.
type readmeBlock struct {
	line  int // of its first command, 1-based
	lines []string
	mark  string // "", "skip", "server" or "pty"
}

// readmeBlocks reads README.md's ```sh blocks, with their markers. A skip
// must say why.
func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	mark := ""
	for i, line := range strings.Split(string(raw), "\n") {
		switch {
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur, mark = nil, ""
		case cur != nil:
			cur.lines = append(cur.lines, line)
		case line == "```sh":
			cur = &readmeBlock{line: i + 2, mark: mark}
		case strings.HasPrefix(line, "<!-- readme-test:"):
			m := readmeMarker.FindStringSubmatch(line)
			if m == nil || (m[1] == "skip" && strings.TrimSpace(m[2]) == "") {
				t.Fatalf("README.md:%d: %q: want <!-- readme-test: skip (why) -->, <!-- readme-test: server --> or <!-- readme-test: pty (what it types) -->", i+1, line)
			}
			mark = m[1]
		case strings.TrimSpace(line) != "" && mark != "":
			t.Fatalf("README.md:%d: a readme-test marker must come right before its ```sh block", i+1)
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: a ```sh block is not closed", cur.line-1)
	}
	return blocks
}

// serverSettings reads the settings of the README's server blocks: the
// NAME=value words before ./scripts/up.sh as the environment, the words
// after it as flags of paddock serve. Later blocks add to earlier ones.
func serverSettings(blocks []readmeBlock) (env, flags []string) {
	for _, b := range blocks {
		if b.mark != "server" {
			continue
		}
		joined := strings.ReplaceAll(strings.Join(b.lines, "\n"), "\\\n", " ")
		for _, line := range strings.Split(joined, "\n") {
			line, _, _ = strings.Cut(line, "#")
			before, after, ok := strings.Cut(line, "./scripts/up.sh")
			if !ok {
				continue
			}
			for _, w := range strings.Fields(before) {
				if strings.Contains(w, "=") {
					env = append(env, w)
				}
			}
			flags = append(flags, strings.Fields(after)...)
		}
	}
	return env, flags
}

// readmePorts are the README's fixed ports, each given one of the test's
// own: the API (8080), the local package index (8081).
var readmePorts = regexp.MustCompile(`\b(8080|8081)\b`)

// TestReadme runs every README.md shell block, in order, as a new user
// would: against a server started as scripts/up.sh starts it (the built
// binaries in ./bin, data in ./data, the default image) with the settings
// the README's server blocks name, in bash, with PATH holding the
// binaries and $ADMIN_KEY the key the first start printed. It runs in a
// directory and HOME of its own, with its own instance id and ports. The
// README names its providers itself, so PADDOCK_TEST_PROVIDER changes
// nothing here.
func TestReadme(t *testing.T) {
	testenv.RequireDocker(t, testenv.DefaultImage, "paddock/all-harness:bookworm")
	blocks := readmeBlocks(t, filepath.Join(testenv.RepoRoot(t), "README.md"))
	env, flags := serverSettings(blocks)

	work, home := t.TempDir(), t.TempDir()
	binDir := filepath.Join(work, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"paddock", "paddock-shim"} {
		copyFile(t, testenv.Binary(t, name), filepath.Join(binDir, name), 0o755)
	}
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	apiPort, indexPort := strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))
	own := func(s string) string { // the README's ports, made the test's
		return readmePorts.ReplaceAllStringFunc(s, func(p string) string {
			if p == "8080" {
				return apiPort
			}
			return indexPort
		})
	}
	for i := range env { // registry.test=127.0.0.1:8081, say
		env[i] = own(env[i])
	}
	for i := range flags {
		flags[i] = own(flags[i])
	}
	suffix := uuid.NewString()[:8]
	env = append(env,
		"PADDOCK_INSTANCE_ID="+instance,
		"PADDOCK_RUN_DIR="+filepath.Join(testenv.ShortTempDir(t), "r"),
		"PADDOCK_SSH_LISTEN=127.0.0.1:"+strconv.Itoa(freePort(t)),
		"PADDOCK_EGRESS_PROXY_PORT="+strconv.Itoa(freePort(t)),
		"PADDOCK_EGRESS_PROXY_NETWORK=pdk-e2e-p-"+suffix,
		"PADDOCK_EGRESS_OPEN_NETWORK=pdk-e2e-o-"+suffix,
	)
	adminKey := startReadmeServer(t, work, append([]string{"--listen", "127.0.0.1:" + apiPort, "--data-dir", "./data"}, flags...), env)

	var script bytes.Buffer
	lineOf := map[int]int{} // script line → README line
	script.WriteString("set -eE -o pipefail\ntrap 'echo \"readme-test: line $LINENO exited $?\" >&2' ERR\n")
	n := 3
	for _, b := range blocks {
		if b.mark != "" && b.mark != "pty" {
			continue
		}
		lines := b.lines
		if b.mark == "pty" {
			// One terminal for the block, whose last command reads it.
			block := "set -e\n" + strings.Join(lines, "\n")
			lines = []string{"script -qec '" + strings.ReplaceAll(block, "'", `'\''`) + "' /dev/null <<< exit"}
		}
		for i, line := range lines {
			script.WriteString(own(line) + "\n")
			lineOf[n] = b.line + i
			n++
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), readmeTimeout(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = work
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Whatever the blocks started in the background (the package index)
	// goes with them: their process group is the bash this test started.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = readmeEnv(home, binDir, adminKey)
	// A file, not a pipe: what the blocks leave running in the background
	// holds no pipe open after bash exits.
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		b, _ := os.ReadFile(out.Name())
		at := "?"
		if m := regexp.MustCompile(`readme-test: line (\d+) exited`).FindSubmatch(b); m != nil {
			l, _ := strconv.Atoi(string(m[1]))
			at = strconv.Itoa(lineOf[l])
		}
		t.Fatalf("README.md:%s: %v\n%s", at, err, tail(string(b), 6000))
	}
}

// readmeEnv is the environment of a user's shell: HOME, PATH with the
// binaries and $ADMIN_KEY as the README says to keep it; no tokens (the
// README makes stand-ins for those a user has not set). Nothing of the
// test process's own PADDOCK_* settings reaches it.
func readmeEnv(home, binDir, adminKey string) []string {
	env := []string{
		"HOME=" + home, "PATH=" + binDir + ":" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"ADMIN_KEY=" + adminKey,
	}
	if v, ok := os.LookupEnv("DOCKER_HOST"); ok {
		env = append(env, "DOCKER_HOST="+v)
	}
	return env
}

// startReadmeServer starts bin/paddock serve in work, as scripts/up.sh
// does, and returns the admin key its first start printed.
func startReadmeServer(t *testing.T, work string, args, env []string) string {
	t.Helper()
	t.Cleanup(func() { testenv.UnmountUnder(filepath.Join(work, "data")) })
	cmd := exec.Command(filepath.Join(work, "bin", "paddock"), append([]string{"serve"}, args...)...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), append([]string{"PADDOCK_LOG_LEVEL=warn"}, env...)...)
	var key string
	// A warm pool fills before the server listens.
	s := launch(t, cmd, 5*time.Minute, func(line string) bool {
		_, k, ok := strings.Cut(line, "admin API key (shown once, store it now): ")
		key = strings.TrimSpace(k)
		return ok
	})
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			s.stop(t)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", tail(s.logs.String(), 4000))
		}
	})
	return key
}

// readmeTimeout bounds the README's blocks: 25 minutes, or less where go
// test's own deadline comes sooner, leaving a minute for the cleanups.
func readmeTimeout(t *testing.T) time.Duration {
	d := 25 * time.Minute
	if end, ok := t.Deadline(); ok && time.Until(end)-time.Minute < d {
		d = time.Until(end) - time.Minute
	}
	return d
}

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("…%s", s[len(s)-n:])
}
