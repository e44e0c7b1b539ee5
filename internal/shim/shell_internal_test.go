package shim

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDefaultShell(t *testing.T) {
	dir := t.TempDir()
	exe := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zsh, fish := exe("zsh"), exe("fish")
	passwd := filepath.Join(dir, "passwd")
	if err := os.WriteFile(passwd, []byte("root:x:0:0:root:/root:"+zsh+"\nuser:x:1000:1000::/home/user:"+fish+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bashOrSh := "/bin/sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		bashOrSh = "/bin/bash"
	}
	for _, tc := range []struct {
		name, env, passwd string
		uid               int
		want              string
	}{
		{"$SHELL first", fish, passwd, 0, fish},
		{"the login shell in passwd", "", passwd, 0, zsh},
		{"another user's", "", passwd, 1000, fish},
		{"a $SHELL that does not exist", filepath.Join(dir, "nope"), passwd, 0, zsh},
		{"no passwd entry: bash where there is one", "", passwd, 42, bashOrSh},
		{"no passwd at all", "", filepath.Join(dir, "none"), 0, bashOrSh},
	} {
		if got := defaultShell(tc.env, tc.passwd, tc.uid); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
