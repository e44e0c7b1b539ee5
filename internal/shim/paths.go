package shim

import (
	"io/fs"
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

// fileMode converts the protocol's permission bits (07777) to a Go mode.
func fileMode(bits uint32) fs.FileMode {
	m := fs.FileMode(bits & 0o777)
	if bits&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if bits&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if bits&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}
