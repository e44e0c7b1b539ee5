package snapshot

import (
	"archive/tar"
	"bytes"
	"io"
	"slices"
	"testing"
)

// TestRestoreLeavesCapabilitiesAlone: the runtime's bound capabilities
// are written again by its bindings at every start, while a restore runs
// too; a restore neither writes nor removes them (it once failed with
// file_exists racing them), and writes everything else, .paddock's
// other files among them.
func TestRestoreLeavesCapabilitiesAlone(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := []string{"./", "./a.txt", "./.paddock/", "./.paddock/memory.json", "./.paddock/capabilities/",
		"./.paddock/capabilities/codex/", "./.paddock/capabilities/bin/tool", ".paddock/capabilities", "./.paddock/capabilitiesx"}
	for _, n := range names {
		h := &tar.Header{Name: n, Mode: 0o644, Typeflag: tar.TypeReg}
		if n[len(n)-1] == '/' {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	tr := tar.NewReader(withoutCapabilities(&buf))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name)
	}
	want := []string{"./", "./a.txt", "./.paddock/", "./.paddock/memory.json", "./.paddock/capabilitiesx"}
	if !slices.Equal(got, want) {
		t.Fatalf("restored %q, want %q", got, want)
	}
	if _, err := io.ReadAll(withoutCapabilities(bytes.NewReader([]byte("not a tar archive, long enough to have a header block")))); err == nil {
		t.Fatal("a broken artifact restored without an error")
	}
}
