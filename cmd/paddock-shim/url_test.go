package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestURLCommand runs `paddock-shim url PORT` as a process: it prints the
// port's preview URL from the template in its environment, and without
// one, or with a bad port or none, fails saying why.
func TestURLCommand(t *testing.T) {
	bin := shimBinary(t)
	const tmpl = "PADDOCK_PREVIEW_URL_TEMPLATE=https://{port}-0123456789ab.preview.example.com/"
	for _, tc := range []struct {
		name    string
		args    []string
		env     []string
		stdout  string
		stderrs string // a part of stderr, on a failure
	}{
		{name: "a port", args: []string{"url", "3000"}, env: []string{tmpl},
			stdout: "https://3000-0123456789ab.preview.example.com/\n"},
		{name: "previews off", args: []string{"url", "3000"}, stderrs: "previews are off in this sandbox"},
		{name: "a bad port", args: []string{"url", "70000"}, env: []string{tmpl}, stderrs: `"70000" is not a port`},
		{name: "no port", args: []string{"url"}, env: []string{tmpl}, stderrs: "usage: paddock-shim url PORT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, tc.env...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tc.stderrs == "" {
				if err != nil || stdout.String() != tc.stdout {
					t.Fatalf("stdout %q, stderr %q, %v; want stdout %q", stdout.String(), stderr.String(), err, tc.stdout)
				}
				return
			}
			if err == nil || stdout.Len() != 0 || !strings.Contains(stderr.String(), tc.stderrs) {
				t.Fatalf("stdout %q, stderr %q, %v; want a failure saying %q", stdout.String(), stderr.String(), err, tc.stderrs)
			}
		})
	}
}
