package shim

import (
	"path/filepath"
	"strings"
)

// cleanPath validates a path from a request: it must be absolute and free of
// NUL bytes. It returns the cleaned path.
func cleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errInvalid("invalid_path", "path is empty")
	case strings.IndexByte(p, 0) >= 0:
		return "", errInvalid("invalid_path", "path contains a NUL byte")
	case !filepath.IsAbs(p):
		return "", errInvalid("invalid_path", "path %q is not absolute", p)
	}
	return filepath.Clean(p), nil
}
