package shim

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestTarEntryRemovedMeanwhile: a live workspace changes while a snapshot
// reads it. A file or link the walk saw and that is gone when its entry
// is written is left out of the archive, rather than failing the whole
// download (an upload's staging directory, made and removed beside it,
// once failed a snapshot so with file_not_found).
func TestTarEntryRemovedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	file, link := filepath.Join(dir, "f"), filepath.Join(dir, "l")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", link); err != nil {
		t.Fatal(err)
	}
	fileInfo, err := os.Lstat(file)
	if err != nil {
		t.Fatal(err)
	}
	linkInfo, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	buf := make([]byte, 4096)
	if err := addTarEntry(tw, file, "f", fileInfo, buf); err != nil {
		t.Fatalf("a file removed meanwhile: %v", err)
	}
	if err := addTarEntry(tw, link, "l", linkInfo, buf); err != nil {
		t.Fatalf("a link removed meanwhile: %v", err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tar.NewReader(&out).Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("the archive has an entry for what was removed: %v", err)
	}
}

// TestTarDirectoryMadeMeanwhile: a directory entry whose directory
// something else makes while the upload runs (a runtime's capabilities
// are laid out in /workspace/.paddock while a snapshot is restored into
// it) is taken as there, not failed as file_exists. Two uploads of the
// same directories into one place race each other here, entry by entry.
func TestTarDirectoryMadeMeanwhile(t *testing.T) {
	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	const dirs = 2000
	for i := range dirs {
		name := fmt.Sprintf("d%d/", i)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}); err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "sub/", Mode: 0o755}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			x := &extractor{dir: dir, buf: make([]byte, 4096)}
			errs <- x.extract(tar.NewReader(bytes.NewReader(archive.Bytes())))
		}()
	}
	if err := errors.Join(<-errs, <-errs); err != nil {
		t.Fatalf("an upload racing another for the same directories: %v", err)
	}
	for i := range dirs {
		if fi, err := os.Stat(filepath.Join(dir, fmt.Sprintf("d%d", i), "sub")); err != nil || !fi.IsDir() {
			t.Fatalf("d%d/sub: %v", i, err)
		}
	}
}
