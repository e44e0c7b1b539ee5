package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestImageBuildsTakeTurns: two replicas on one host (one data directory,
// one engine) build their images one after the other: the second runs
// the build script once the first's has ended, never beside it.
func TestImageBuildsTakeTurns(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "build.sh")
	// A build marks itself busy (and notes an overlap if another is),
	// then holds until the test releases it.
	body := `#!/bin/sh
D=` + dir + `
if [ "$1" = --list ]; then echo img paddock/img:1; exit 0; fi
mkdir "$D/busy" 2>/dev/null || echo overlap >>"$D/log"
echo start >>"$D/log"
while [ ! -e "$D/release" ]; do sleep 0.05; done
rmdir "$D/busy" 2>/dev/null
echo end >>"$D/log"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	replica := func() *imageBuilds {
		b, err := imagebuild.New(t.Context(), imagebuild.Config{
			Script: script, Targets: []string{"img"},
			Present: func(context.Context, string) (bool, error) { return false, nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		return &imageBuilds{builder: b, lock: filepath.Join(dir, "image-builds.lock")}
	}
	a, b := replica(), replica()
	a.start(t.Context())
	b.start(t.Context())
	defer a.close()
	defer b.close()
	log := func() string {
		got, _ := os.ReadFile(filepath.Join(dir, "log"))
		return string(got)
	}
	testenv.Eventually(t, func() error {
		if !strings.Contains(log(), "start") {
			return fmt.Errorf("no build started: %q", log())
		}
		return nil
	})
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		if got := log(); got != "start\nend\nstart\nend\n" {
			return fmt.Errorf("builds logged %q, want one after the other", got)
		}
		return nil
	})
}
