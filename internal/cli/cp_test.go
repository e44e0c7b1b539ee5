package cli

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRemotePath(t *testing.T) {
	tests := []struct {
		in              string
		runtime, path   string
		remote, wantErr bool
	}{
		{in: "agent:/workspace/a", runtime: "agent", path: "/workspace/a", remote: true},
		{in: "0b5e6a53-8f4e-4f0e-9d1e-2f6a3c9b7e11:/", runtime: "0b5e6a53-8f4e-4f0e-9d1e-2f6a3c9b7e11", path: "/", remote: true},
		{in: "agent:relative", remote: true, wantErr: true},
		{in: "agent:", remote: true, wantErr: true},
		{in: "./agent:/x"},
		{in: "/tmp/a:b"},
		{in: "-"},
		{in: "file.txt"},
	}
	for _, tt := range tests {
		rt, p, remote, err := remotePath(tt.in)
		if rt != tt.runtime || p != tt.path || remote != tt.remote || (err != nil) != tt.wantErr {
			t.Errorf("remotePath(%q) = %q, %q, %v, %v", tt.in, rt, p, remote, err)
		}
	}
}

// tarWith builds a tar of the given headers, each regular file holding
// its name.
func tarWith(t *testing.T, hdrs ...tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range hdrs {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Name))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(h.Name))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestExtractTarStaysInside checks that a downloaded archive cannot write
// outside the directory it is extracted into.
func TestExtractTarStaysInside(t *testing.T) {
	reg := func(name string) tar.Header { return tar.Header{Name: name, Typeflag: tar.TypeReg} }
	tests := []struct {
		name    string
		hdrs    []tar.Header
		wantErr bool
	}{
		{"plain", []tar.Header{{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755}, reg("d/f"), {Name: "l", Typeflag: tar.TypeSymlink, Linkname: "d/f"}}, false},
		{"dot-dot", []tar.Header{reg("../evil")}, true},
		{"nested dot-dot", []tar.Header{reg("d/../../evil")}, true},
		{"absolute", []tar.Header{reg("/evil")}, true},
		{"through a symlink", []tar.Header{{Name: "out", Typeflag: tar.TypeSymlink, Linkname: ".."}, reg("out/evil")}, true},
		{"hard link outside", []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "../evil"}}, true},
		{"replacing a symlink", []tar.Header{{Name: "f", Typeflag: tar.TypeSymlink, Linkname: "../evil"}, reg("f")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "in")
			err := extractTar(bytes.NewReader(tarWith(t, tt.hdrs...)), dir)
			if (err != nil) != tt.wantErr {
				t.Fatalf("extract: %v, want error %v", err, tt.wantErr)
			}
			if _, err := os.Lstat(filepath.Join(root, "evil")); err == nil {
				t.Fatal("an entry was written outside the directory")
			}
			if tt.wantErr && err != nil && !strings.Contains(err.Error(), "outside") {
				t.Fatalf("error %q does not say why", err)
			}
		})
	}
}

// TestTarRoundTrip checks that writeTar and extractTar agree: contents,
// modes and links survive.
func TestTarRoundTrip(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "a", "b"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a", "b", "x.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/b/x.sh", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeTar(&b, src); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy")
	if err := extractTar(&b, dst); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dst, "a", "b", "x.sh")); err != nil || string(got) != "#!/bin/sh\n" {
		t.Fatalf("file %q %v", got, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "a", "b", "x.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("file mode %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "a")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("dir mode %v %v", fi.Mode(), err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "a/b/x.sh" {
		t.Fatalf("link %q %v", l, err)
	}
}

// TestCopyToAMissingLocalDirectory: a download into a directory that does
// not exist names that directory, and no error names the temporary file a
// download goes through.
func TestCopyToAMissingLocalDirectory(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nodir")
	for _, dst := range []string{filepath.Join(missing, "f.txt"), missing + "/"} {
		err := checkLocalDir(dst, dst)
		if err == nil || !strings.Contains(err.Error(), "local directory "+missing) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("checkLocalDir(%q): %v", dst, err)
		}
	}
	if err := checkLocalDir(filepath.Join(dir, "f.txt"), filepath.Join(dir, "f.txt")); err != nil {
		t.Errorf("an existing directory: %v", err)
	}
	err := writeLocalFile(filepath.Join(missing, "f.txt"), strings.NewReader("x"), 0o644)
	if err == nil || strings.Contains(err.Error(), ".paddock-cp") || !strings.Contains(err.Error(), filepath.Join(missing, "f.txt")) {
		t.Errorf("writeLocalFile into a missing directory: %v", err)
	}
}
