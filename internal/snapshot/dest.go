package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Destination is where snapshots' artifacts are kept: a key names one
// artifact ("<org id>/<snapshot id>.tar.gz").
type Destination interface {
	// Name is the destination's kind as a snapshot records it: "local"
	// or "s3".
	Name() string
	// Put stores r under key and returns how many bytes it stored. A
	// failed Put leaves nothing under key.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Get opens the artifact under key; a missing one is not found.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes the artifact under key; a missing one is no error.
	Delete(ctx context.Context, key string) error
}

// Local keeps artifacts as files under a directory (the data directory's
// snapshots/), private to the server's user.
type Local struct{ dir string }

var _ Destination = (*Local)(nil)

// NewLocal is the local destination under dir, created if missing.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("snapshot directory: %w", err)
	}
	return &Local{dir: dir}, nil
}

// Name is "local".
func (l *Local) Name() string { return "local" }

// path is key's file; a key is made by the service and never names a
// path outside dir.
func (l *Local) path(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || filepath.IsAbs(key) {
		return "", fmt.Errorf("snapshot key %q is not a relative path", key)
	}
	return filepath.Join(l.dir, filepath.FromSlash(key)), nil
}

// Put writes r to a temporary file beside key's and renames it into place.
func (l *Local) Put(_ context.Context, key string, r io.Reader) (int64, error) {
	p, err := l.path(key)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return 0, err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return 0, err
	}
	return n, nil
}

// Get opens key's file.
func (l *Local) Get(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errdefs.NotFound(CodeArtifactMissing, "the snapshot's artifact is missing from its destination").WithCause(err)
	}
	return f, err
}

// Delete removes key's file.
func (l *Local) Delete(_ context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
