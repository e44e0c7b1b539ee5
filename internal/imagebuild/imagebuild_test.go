package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/internal/version"
)

// script builds "images" as files in its directory, speaking the protocol
// of scripts/build-images.sh. Its base target imports its image and then
// fails its check (as a build whose last step fails); derived finds base
// current on its way, as build-images.sh does for an image it derives from.
const script = `#!/bin/sh
cd "$(dirname "$0")"
case "$1" in
--list) printf 'base img/base\nderived img/derived\nbroken img/broken\nother img/other\n' ;;
broken)
	echo "build-images: img/broken step 1/1: fetching" >&2
	echo "build-images: fetching https://user:s3cret@mirror.invalid/ failed" >&2
	exit 1 ;;
base)
	echo "build-images: img/base step 1/2: importing" >&2
	touch img-base
	echo "build-images: img/base step 2/2: checking" >&2
	echo "build-images: img/base does not run its tools" >&2
	exit 1 ;;
derived)
	[ -e img-base ] && echo "build-images: img/base is current" >&2
	echo "build-images: img/derived step 1/1: making" >&2
	touch img-derived
	echo "build-images: built img/derived in 0.1s" >&2 ;;
esac
`

func newBuilder(t *testing.T, targets ...string) *Builder {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "build.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := New(t.Context(), Config{
		Script: path, Targets: targets,
		Present: func(_ context.Context, ref string) (bool, error) {
			_, err := os.Stat(filepath.Join(dir, strings.ReplaceAll(ref, "/", "-")))
			return err == nil, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFailedThenCurrent: a build that fails after its image is there is
// failed (present), and ready again once a later build finds it current;
// an image no target builds is missing.
func TestFailedThenCurrent(t *testing.T) {
	b := newBuilder(t, "base")
	b.Run(t.Context())
	im, _ := b.Lookup("img/base")
	if im.State != Failed || !im.Present || Progress(im) != "failed at step 2 of 2: checking" {
		t.Fatalf("base after its failed build: %+v (%s)", im, Progress(im))
	}
	if other, _ := b.Lookup("img/other"); other.State != Missing || b.Expected("img/other") {
		t.Fatalf("other: %+v", other)
	}

	b = newBuilder(t, "base", "derived")
	b.Run(t.Context())
	for _, ref := range []string{"img/base", "img/derived"} {
		if im, _ := b.Lookup(ref); im.State != Ready || !im.Present {
			t.Fatalf("%s after derived's build: %+v", ref, im)
		}
	}
}

// TestCheck: a start on an image still to be built is told to come back
// (image_building, Retry-After), on a failed one why; an image the builder
// does not make is not its business.
func TestCheck(t *testing.T) {
	b := newBuilder(t, "base", "derived", "broken")
	err := b.Check(t.Context(), "img/derived")
	var pe *errdefs.Error
	if !errors.As(err, &pe) || pe.Code != CodeImageBuilding || pe.RetryAfter != RetryAfter || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("pending: %v", err)
	}
	if !b.Expected("img/derived") || b.Check(t.Context(), "img/unknown") != nil {
		t.Fatal("expected or unknown images misjudged")
	}
	// One of the builder's, which this server does not build: not found,
	// never left to a pull (a registry's namespace is not ours).
	if err := b.Check(t.Context(), "img/other"); !errors.As(err, &pe) || pe.Code != CodeImageNotFound {
		t.Fatalf("missing, not built here: %v", err)
	}
	b.build(t.Context(), "base")
	if im, _ := b.Lookup("img/base"); im.State != Failed {
		t.Fatalf("base: %+v", im)
	}
	// Present, although its build failed: a sandbox may start on it.
	if err := b.Check(t.Context(), "img/base"); err != nil {
		t.Fatalf("present image: %v", err)
	}
	b.build(t.Context(), "broken")
	err = b.Check(t.Context(), "img/broken")
	if !errors.As(err, &pe) || pe.Code != CodeImageBuildFailed || !strings.Contains(pe.Message, "failed at step 1 of 1: fetching") || b.Expected("img/broken") {
		t.Fatalf("failed, not present: %v", err)
	}
	// What the script printed is for the log, not for callers.
	if im, _ := b.Lookup("img/broken"); strings.Contains(pe.Message, "s3cret") || strings.Contains(Progress(im), "s3cret") {
		t.Fatalf("a failed build's message shows the script's output: %q", pe.Message)
	}
}

// TestEngineDownAtStart: an engine that cannot say whether an image is
// there (restarting) does not stop New; the image counts as absent, to be
// built, until a build or a start finds it.
func TestEngineDownAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "build.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := New(t.Context(), Config{
		Script: path, Targets: []string{"derived"},
		Present: func(context.Context, string) (bool, error) {
			return false, errors.New("Cannot connect to the Docker daemon")
		},
	})
	if err != nil {
		t.Fatalf("New with the engine down: %v", err)
	}
	if im, _ := b.Lookup("img/derived"); im.State != Pending || im.Present {
		t.Fatalf("derived: %+v", im)
	}
	if im, _ := b.Lookup("img/other"); im.State != Missing {
		t.Fatalf("other: %+v", im)
	}
}

// stuckScript starts a build step, prints a 2 MiB line, leaves behind a
// process outside its group that holds its stderr open (as `docker run`'s
// container does), and then waits to be stopped. It writes its own pid
// (its group's) and the straggler's.
const stuckScript = `#!/bin/bash
cd "$(dirname "$0")"
[ "$1" = --list ] && { echo slow img/slow; exit 0; }
echo $$ >group.pid
echo "build-images: img/slow step 1/2: fetching" >&2
head -c 2097152 /dev/zero | tr '\0' x >&2
echo >&2
echo "build-images: img/slow step 2/2: waiting" >&2
setsid sleep 600 &
echo $! >straggler.pid
sleep 600
`

// TestCancelEndsBuild: a server that stops ends the build under way
// within a bound, its whole process group gone, although a straggler
// holds the script's stderr open; a line past the bound neither stops the
// following nor blocks the script.
func TestCancelEndsBuild(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "build.sh")
	if err := os.WriteFile(path, []byte(stuckScript), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := New(t.Context(), Config{
		Script: path, Targets: []string{"slow"},
		Present: func(context.Context, string) (bool, error) { return false, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	pid := func(name string) int {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0
		}
		n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		return n
	}
	t.Cleanup(func() {
		if p := pid("straggler.pid"); p > 0 {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Run(ctx)
	}()
	testenv.Eventually(t, func() error {
		if im, _ := b.Lookup("img/slow"); im.Step != 2 || pid("straggler.pid") == 0 {
			return fmt.Errorf("the build never reached its second step: %+v", im)
		}
		return nil
	})
	group := pid("group.pid")
	cancel()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("Run did not return after its context ended")
	}
	// Its members were killed; the last of them may not be reaped yet (a
	// child whose parent died is reaped by init, in its own time).
	testenv.Eventually(t, func() error {
		if err := syscall.Kill(-group, 0); !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("the build's process group %d is still there: %v", group, err)
		}
		return nil
	})
	if im, _ := b.Lookup("img/slow"); im.State != Failed || Progress(im) != "failed at step 2 of 2: waiting" {
		t.Fatalf("stopped build: %+v", im)
	}
}

// TestBuildImagesList: the builder reads the real scripts/build-images.sh
// --list, and the optional images a server builds by default are targets
// of it.
func TestBuildImagesList(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "build-images.sh"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(t.Context(), Config{
		Script: script, Targets: []string{"computer-use", "all-harness"},
		Present: func(context.Context, string) (bool, error) { return false, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"test": "paddock/test-busybox:latest", "default": "paddock/debian:bookworm",
		"computer-use": "paddock/computer-use:bookworm", "all-harness": "paddock/all-harness:bookworm",
		"shim": "paddock/shim:" + version.Version, // the Kubernetes provider's agent image
	}
	got := map[string]string{}
	for _, im := range b.Images() {
		got[im.Target] = im.Ref
	}
	if !maps.Equal(got, want) {
		t.Fatalf("targets of build-images.sh --list: %v, want %v", got, want)
	}
	if !b.Expected("paddock/all-harness:bookworm") || b.Expected("paddock/debian:bookworm") {
		t.Fatalf("images: %+v", b.Images())
	}
}
