package capability

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tarEntry is one tar tarEntry; a zero Type is a regular file.
type tarEntry struct {
	Name     string
	Type     byte
	Mode     int64
	Body     string
	Linkname string
}

func makeTar(t *testing.T, gz bool, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	tw := tar.NewWriter(w)
	for _, e := range entries {
		typ, mode := e.Type, e.Mode
		if typ == 0 {
			typ = tar.TypeReg
		}
		if mode == 0 {
			mode = 0o600
		}
		hdr := &tar.Header{
			Name: e.Name, Typeflag: typ, Mode: mode, Size: int64(len(e.Body)), Linkname: e.Linkname,
			ModTime: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Uid: 1000, Gid: 1000, Uname: "dev", Gname: "dev",
		}
		if typ != tar.TypeReg {
			hdr.Size = 0
		}
		if typ == tar.TypeXGlobalHeader {
			hdr = &tar.Header{Typeflag: typ, Name: e.Name, PAXRecords: map[string]string{"comment": "0123abc"}}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// toolManifest ships one tool.
const toolManifest = head + "tools:\n  - {name: x, path: tools/x, description: d}\n"

func TestReadTarAccepts(t *testing.T) {
	tests := []struct {
		name    string
		gz      bool
		entries []tarEntry
	}{
		{"root, plain tar", false, []tarEntry{
			{Name: "capability.yaml", Body: toolManifest},
			{Name: "tools/x", Body: "#!/bin/sh\n", Mode: 0o700},
		}},
		{"root with ./ and directory entries, gzip", true, []tarEntry{
			{Name: "./", Type: tar.TypeDir, Mode: 0o755},
			{Name: "./capability.yaml", Body: toolManifest},
			{Name: "./tools/", Type: tar.TypeDir, Mode: 0o755},
			{Name: "./tools/x", Body: "#!/bin/sh\n"},
		}},
		{"one top-level directory, as git archive writes it", true, []tarEntry{
			{Name: "pax_global_header", Type: tar.TypeXGlobalHeader},
			{Name: "kit-1.0/", Type: tar.TypeDir, Mode: 0o755},
			{Name: "kit-1.0/capability.yaml", Body: toolManifest},
			{Name: "kit-1.0/tools/x", Body: "#!/bin/sh\n", Mode: 0o755},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ReadTar(bytes.NewReader(makeTar(t, tt.gz, tt.entries...)), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range b.Files {
				got = append(got, f.Mode.String()+" "+f.Path)
			}
			want := []string{"-rw-r--r-- capability.yaml", "-rwxr-xr-x tools/x"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("files %q, want %q", got, want)
			}
		})
	}
}

func TestReadTarRefuses(t *testing.T) {
	manifest := tarEntry{Name: "capability.yaml", Body: head}
	tests := []struct {
		name     string
		entries  []tarEntry
		maxBytes int64
		want     []string
	}{
		{
			name:    "parent traversal",
			entries: []tarEntry{manifest, {Name: "../evil", Body: "x"}, {Name: "a/../../evil", Body: "x"}},
			want:    []string{"../evil: paths must not contain '..'", "a/../../evil: paths must not contain '..'"},
		},
		{
			name:    "absolute path",
			entries: []tarEntry{manifest, {Name: "/etc/cron.d/evil", Body: "x"}},
			want:    []string{"/etc/cron.d/evil: absolute paths are not allowed"},
		},
		{
			name: "links and special files",
			entries: []tarEntry{manifest,
				{Name: "link", Type: tar.TypeSymlink, Linkname: "/etc/passwd"},
				{Name: "hard", Type: tar.TypeLink, Linkname: "capability.yaml"},
				{Name: "dev", Type: tar.TypeChar},
				{Name: "blk", Type: tar.TypeBlock},
				{Name: "fifo", Type: tar.TypeFifo},
			},
			want: []string{
				"blk: devices are not allowed",
				"dev: devices are not allowed",
				"fifo: FIFOs are not allowed",
				"hard: hard links are not allowed",
				"link: symlinks are not allowed",
			},
		},
		{
			name: "a manifest referring to a symlink inside one top-level directory",
			entries: []tarEntry{
				{Name: "kit/capability.yaml", Body: toolManifest},
				{Name: "kit/tools/x", Type: tar.TypeSymlink, Linkname: "/bin/sh"},
			},
			want: []string{
				`capability.yaml: tools[0].path: "tools/x" is a symlink, not a regular file`,
				"kit/tools/x: symlinks are not allowed",
			},
		},
		{
			name:    "two top-level directories",
			entries: []tarEntry{{Name: "a/capability.yaml", Body: head}, {Name: "b/x", Body: "x"}},
			want:    []string{"capability.yaml: not found at the root of the bundle"},
		},
		{
			name:     "more bytes than allowed",
			entries:  []tarEntry{manifest, {Name: "big", Body: strings.Repeat("x", 200)}},
			maxBytes: 100 + int64(len(head)),
			want:     []string{"more than " + strconv.Itoa(100+len(head)) + " bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maxBytes := tt.maxBytes
			if maxBytes == 0 {
				maxBytes = 1 << 20
			}
			b, err := ReadTar(bytes.NewReader(makeTar(t, true, tt.entries...)), maxBytes)
			if err == nil {
				t.Fatalf("ReadTar succeeded: %v", b.Files)
			}
			if got := problems(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReadTarFileCountCap(t *testing.T) {
	entries := []tarEntry{{Name: "capability.yaml", Body: head}}
	for i := range MaxFiles {
		entries = append(entries, tarEntry{Name: "f/" + strconv.Itoa(i), Body: "x"})
	}
	_, err := ReadTar(bytes.NewReader(makeTar(t, false, entries...)), 0)
	want := []string{"more than 2000 files"}
	if got := problems(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	// One fewer is fine.
	if _, err := ReadTar(bytes.NewReader(makeTar(t, false, entries[:MaxFiles]...)), 0); err != nil {
		t.Errorf("%d files: %v", MaxFiles, err)
	}
}

func TestReadTarCorrupt(t *testing.T) {
	data := makeTar(t, true, tarEntry{Name: "capability.yaml", Body: head})
	_, err := ReadTar(bytes.NewReader(data[:len(data)/2]), 0)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || !strings.HasPrefix(ve.Problems[0].Message, "reading the archive: ") {
		t.Errorf("error %v, want one problem reading the archive", err)
	}
}

// TestDigestStable loads the same bundle from a directory, from a
// hand-made archive with other times, owners, modes and a top-level
// directory, and from its own canonical archive: the digest and the
// canonical archive are the same each time.
func TestDigestStable(t *testing.T) {
	files := map[string]string{
		"capability.yaml":                        toolManifest + "skills: [skills/s]\n",
		"tools/x":                                "#!/bin/sh\necho x\n",
		"skills/s/SKILL.md":                      "---\nname: s\ndescription: d\n---\n",
		"lib/run.sh":                             "#!/bin/sh\n",
		strings.Repeat("long/", 30) + "name.txt": "a path longer than 100 bytes",
	}
	dir := t.TempDir()
	for p, data := range files {
		mode := os.FileMode(0o600)
		if p == "lib/run.sh" {
			mode = 0o700
		}
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	fromDir, err := Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}

	var entries []tarEntry
	for p, data := range files {
		mode := int64(0o640)
		if p == "lib/run.sh" {
			mode = 0o750
		}
		entries = append(entries, tarEntry{Name: "bundle/" + p, Body: data, Mode: mode})
	}
	fromTar, err := ReadTar(bytes.NewReader(makeTar(t, true, entries...)), 0)
	if err != nil {
		t.Fatal(err)
	}
	fromCanonical, err := ReadTar(bytes.NewReader(fromDir.Tar()), 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Bundle{"hand-made tar": fromTar, "canonical tar": fromCanonical} {
		if b.Digest != fromDir.Digest {
			t.Errorf("%s: digest %s, from the directory %s", name, b.Digest, fromDir.Digest)
		}
		if !bytes.Equal(b.Tar(), fromDir.Tar()) {
			t.Errorf("%s: canonical archives differ", name)
		}
	}

	// One byte changes the digest.
	files["tools/x"] += " "
	if err := os.WriteFile(filepath.Join(dir, "tools/x"), []byte(files["tools/x"]), 0o600); err != nil {
		t.Fatal(err)
	}
	changed, err := Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if changed.Digest == fromDir.Digest {
		t.Error("a changed file kept the digest")
	}
}

func TestTarIsCanonical(t *testing.T) {
	b := mustLoad(t, map[string]string{
		"capability.yaml": toolManifest,
		"tools/x":         "#!/bin/sh\n",
		"b.sh*":           "#!/bin/sh\n",
		"a.txt":           "a",
	})
	zr, err := gzip.NewReader(bytes.NewReader(b.Tar()))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header has a time %v or a name %q", zr.ModTime, zr.Name)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Uid != 0 || hdr.Gid != 0 || hdr.Uname != "" || hdr.Gname != "" || hdr.ModTime.Unix() != 0 {
			t.Errorf("%s: not canonical: %+v", hdr.Name, hdr)
		}
		got = append(got, strconv.FormatInt(hdr.Mode, 8)+" "+hdr.Name)
	}
	want := []string{"644 a.txt", "755 b.sh", "644 capability.yaml", "755 tools/x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}
