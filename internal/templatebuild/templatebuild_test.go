package templatebuild

import (
	"archive/tar"
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
)

func code(err error) string {
	if pe, ok := errdefs.Public(err); ok {
		return pe.Code
	}
	return ""
}

// TestBaseImages: the bases a Dockerfile names (FROM and COPY --from, not
// its own stages), continuation lines joined; what a build here does not
// run is refused with invalid_dockerfile.
func TestBaseImages(t *testing.T) {
	df := `# syntax comment
ARG X=1
FROM paddock/debian:bookworm AS build
RUN echo a \
    && echo b
FROM --platform=linux/amd64 paddock/test-busybox:latest
COPY --from=build /a /a
COPY --from=0 /b /b
COPY --from=paddock/computer-use:bookworm /c /c
FROM build
`
	ins, err := parseDockerfile(df)
	if err != nil {
		t.Fatal(err)
	}
	if ins[2].cmd != "RUN" || strings.Join(ins[2].args, " ") != "echo a && echo b" {
		t.Fatalf("continuation: %+v", ins[2])
	}
	got, err := baseImages(ins)
	want := []string{"paddock/debian:bookworm", "paddock/test-busybox:latest", "paddock/computer-use:bookworm"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("bases %v, %v; want %v", got, err, want)
	}
	for name, bad := range map[string]string{
		"variable FROM":   "ARG B=x\nFROM $B\n",
		"ADD a URL":       "FROM a\nADD https://example.com/x /x\n",
		"ADD git":         "FROM a\nADD git@example.com:r.git /r\n",
		"ONBUILD":         "FROM a\nONBUILD RUN true\n",
		"no FROM first":   "RUN true\n",
		"empty":           "# nothing\n\n",
		"escape":          "# escape=`\nFROM a\n",
		"FROM with junk":  "FROM a b c d\n",
		"variable --from": "FROM a\nCOPY --from=$X /a /a\n",
	} {
		ins, err := parseDockerfile(bad)
		if err == nil {
			_, err = baseImages(ins)
		}
		if code(err) != CodeInvalidDockerfile {
			t.Errorf("%s: err = %v, want %s", name, err, CodeInvalidDockerfile)
		}
	}
}

func tarOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	return buf.Bytes()
}

// TestSpoolContext: a context within its limit is kept with its
// Dockerfile read; past the limit (as counted, or as the HTTP body's own
// bound says) it is build_context_too_large and nothing is left; not a
// tar, or without the Dockerfile, it is refused.
func TestSpoolContext(t *testing.T) {
	body := tarOf(t, map[string]string{"sub/Dockerfile": "FROM a\n", "x": strings.Repeat("x", 4096)})
	f, text, err := spoolContext(bytes.NewReader(body), int64(len(body)), "./sub/Dockerfile")
	if err != nil || text != "FROM a\n" {
		t.Fatalf("spool: %q, %v", text, err)
	}
	f.Close()
	os.Remove(f.Name())
	if _, _, err := spoolContext(bytes.NewReader(body), int64(len(body))-1, "sub/Dockerfile"); code(err) != CodeContextTooLarge {
		t.Fatalf("past the limit: %v", err)
	}
	rec := httptest.NewRecorder()
	limited := http.MaxBytesReader(rec, ioNopCloser{bytes.NewReader(body)}, 100)
	if _, _, err := spoolContext(limited, 1<<20, "sub/Dockerfile"); code(err) != CodeContextTooLarge {
		t.Fatalf("past the body's bound: %v", err)
	}
	if _, _, err := spoolContext(bytes.NewReader(body), 1<<20, "Dockerfile"); code(err) != CodeDockerfileNotFound {
		t.Fatalf("no such Dockerfile: %v", err)
	}
	if _, _, err := spoolContext(strings.NewReader("not a tar at all, clearly"), 1<<20, "Dockerfile"); code(err) != CodeInvalidContext && code(err) != CodeDockerfileNotFound {
		t.Fatalf("not a tar: %v", err)
	}
	if !errors.Is(errdefs.InvalidArgument(CodeContextTooLarge, "x"), errdefs.ErrInvalidArgument) {
		t.Fatal("kind")
	}
}

type ioNopCloser struct{ *bytes.Reader }

func (ioNopCloser) Close() error { return nil }
