// Package clitest runs the paddock CLI in-process for tests: its arguments,
// streams and environment are values, so a test sees exactly what a user
// would and nothing of the test process leaks in.
package clitest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
)

// Run runs `paddock args...` with env as its whole environment and returns
// what it printed and its exit code. Without HOME, XDG_CONFIG_HOME or
// PADDOCK_CONFIG in env no config file is read or written.
func Run(t testing.TB, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return RunInput(t, env, "", args...)
}

// RunInput is Run with stdin as the standard input.
func RunInput(t testing.TB, env map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Run(t.Context(), cli.Env{
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errOut,
		LookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
	}, args)
	return out.String(), errOut.String(), code
}

// MustRun runs the CLI and fails the test unless it exits 0; it returns
// stdout.
func MustRun(t testing.TB, env map[string]string, args ...string) string {
	t.Helper()
	out, errOut, code := Run(t, env, args...)
	if code != cli.ExitOK {
		t.Fatalf("paddock %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// JSON runs the CLI with -o json, fails the test unless it exits 0, and
// decodes its output into a T.
func JSON[T any](t testing.TB, env map[string]string, args ...string) T {
	t.Helper()
	out := MustRun(t, env, append([]string{"-o", "json"}, args...)...)
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("paddock %s: decode output: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// Env returns an environment that points the CLI at a server.
func Env(url, apiKey string) map[string]string {
	return map[string]string{"PADDOCK_URL": url, "PADDOCK_API_KEY": apiKey}
}

// Table splits a table's output into rows of whitespace-separated cells.
func Table(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}
