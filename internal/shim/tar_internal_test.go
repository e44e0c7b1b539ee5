package shim

import (
	"archive/tar"
	"bytes"
	"errors"
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
