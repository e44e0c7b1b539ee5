package templatebuild

import (
	"archive/tar"
	"errors"
	"io"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Codes of a build's context.
const (
	// CodeContextTooLarge: the context is larger than the installation
	// takes (413).
	CodeContextTooLarge = "build_context_too_large"
	// CodeInvalidContext: the body is not a tar archive.
	CodeInvalidContext = "invalid_build_context"
	// CodeDockerfileNotFound: the context has no such Dockerfile.
	CodeDockerfileNotFound = "dockerfile_not_found"
)

// spoolContext copies body, at most limit bytes, into a temporary file
// (removed by the caller) and returns it rewound with the Dockerfile at
// dockerfile in it.
func spoolContext(body io.Reader, limit int64, dockerfile string) (*os.File, string, error) {
	f, err := os.CreateTemp("", "paddock-build-*.tar")
	if err != nil {
		return nil, "", err
	}
	fail := func(err error) (*os.File, string, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, "", err
	}
	n, err := io.Copy(f, io.LimitReader(body, limit+1))
	var mbe *http.MaxBytesError
	switch {
	case n > limit || errors.As(err, &mbe):
		return fail(errdefs.InvalidArgument(CodeContextTooLarge, "the build context is larger than %d bytes", limit))
	case err != nil:
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	text, err := readDockerfile(f, dockerfile)
	if err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, text, nil
}

// readDockerfile finds name in the tar r and returns its text.
func readDockerfile(r io.Reader, name string) (string, error) {
	want := path.Clean(strings.TrimPrefix(name, "./"))
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", errdefs.InvalidArgument(CodeDockerfileNotFound, "the build context has no %s", name)
		}
		if err != nil {
			return "", errdefs.InvalidArgument(CodeInvalidContext, "the build context is not a tar archive: %v", err)
		}
		if path.Clean(strings.TrimPrefix(h.Name, "./")) != want || h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size > maxDockerfileBytes {
			return "", errdefs.InvalidArgument(CodeInvalidDockerfile, "%s is larger than %d bytes", name, maxDockerfileBytes)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return "", errdefs.InvalidArgument(CodeInvalidContext, "the build context is not a tar archive: %v", err)
		}
		return string(b), nil
	}
}
