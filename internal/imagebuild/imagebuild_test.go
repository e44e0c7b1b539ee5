package imagebuild

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
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
	if im.State != Failed || !im.Present || Progress(im) != "failed at step 2 of 2: img/base does not run its tools (exit status 1)" {
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
	if !errors.As(err, &pe) || pe.Code != CodeImageBuildFailed || !strings.Contains(pe.Message, "step 1/1: fetching") || b.Expected("img/broken") {
		t.Fatalf("failed, not present: %v", err)
	}
}
