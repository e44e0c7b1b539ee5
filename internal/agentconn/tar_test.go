package agentconn_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
)

// tarEntry is one entry of a test archive.
type tarEntry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func makeTar(t *testing.T, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, ModTime: time.Unix(1_700_000_000, 0)}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readTar lists an archive as "name type mode [body|->link]" lines.
func readTar(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		line := h.Name + " " + string(h.Typeflag) + " " + fs.FileMode(h.Mode).Perm().String()
		switch h.Typeflag {
		case tar.TypeReg:
			line += " " + string(body)
		case tar.TypeSymlink:
			line += " ->" + h.Linkname
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

func TestTar(t *testing.T) {
	a := startAgent(t, shim.Options{})
	c := a.client
	ctx := ctxT(t)
	dir := t.TempDir()

	archive := makeTar(t, []tarEntry{
		{name: "./", typ: tar.TypeDir, mode: 0o755},
		{name: "bin/", typ: tar.TypeDir, mode: 0o750},
		{name: "bin/run.sh", body: "#!/bin/sh\necho run\n", mode: 0o755},
		{name: "docs/deep/readme.md", body: "# readme\n"}, // parents not in the archive
		{name: "link", typ: tar.TypeSymlink, link: "bin/run.sh"},
		{name: "hard", typ: tar.TypeLink, link: "docs/deep/readme.md"},
	})
	res, err := c.UploadTar(ctx, dir+"/up", bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	if res.Entries != 6 || res.Bytes != int64(len("#!/bin/sh\necho run\n")+len("# readme\n")) {
		t.Fatalf("upload result %+v", res)
	}
	if fi, err := os.Stat(dir + "/up/bin/run.sh"); err != nil || fi.Mode().Perm() != 0o755 || !fi.ModTime().Equal(time.Unix(1_700_000_000, 0)) {
		t.Fatalf("run.sh: %v %v", fi, err)
	}
	if l, err := os.Readlink(dir + "/up/link"); err != nil || l != "bin/run.sh" {
		t.Fatalf("link: %q %v", l, err)
	}
	if b, err := os.ReadFile(dir + "/up/hard"); err != nil || string(b) != "# readme\n" {
		t.Fatalf("hard link: %q %v", b, err)
	}

	// Download the directory and compare.
	r, err := c.DownloadTar(ctx, dir+"/up")
	if err != nil {
		t.Fatal(err)
	}
	got := readTar(t, r)
	r.Close()
	want := []string{
		"bin/ 5 -rwxr-x---",
		"bin/run.sh 0 -rwxr-xr-x #!/bin/sh\necho run\n",
		"docs/ 5 -rwxr-xr-x",
		"docs/deep/ 5 -rwxr-xr-x",
		"docs/deep/readme.md 0 -rw-r--r-- # readme\n",
		"hard 0 -rw-r--r-- # readme\n",
		"link 2 -rwxrwxrwx ->bin/run.sh",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("download:\n got %q\nwant %q", got, want)
	}

	// A single file comes under its base name.
	r, err = c.DownloadTar(ctx, dir+"/up/bin/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	got = readTar(t, r)
	r.Close()
	if len(got) != 1 || got[0] != "run.sh 0 -rwxr-xr-x #!/bin/sh\necho run\n" {
		t.Fatalf("single file: %q", got)
	}

	// Round trip: download one directory, upload it as another.
	r, err = c.DownloadTar(ctx, dir+"/up")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadTar(ctx, dir+"/copy", r); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r1, _ := c.DownloadTar(ctx, dir+"/copy")
	copied := readTar(t, r1)
	r1.Close()
	if strings.Join(copied, "|") != strings.Join(want, "|") {
		t.Fatalf("copy differs:\n got %q\nwant %q", copied, want)
	}

	_, err = c.DownloadTar(ctx, dir+"/missing")
	wantCode(t, err, errdefs.ErrNotFound, "file_not_found")
	_, err = c.DownloadTar(ctx, "relative")
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_path")
	_, err = c.UploadTar(ctx, dir+"/garbage", strings.NewReader(strings.Repeat("not a tar ", 100)))
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_tar")
	_, err = c.UploadTar(ctx, dir+"/up/bin/run.sh", bytes.NewReader(archive))
	wantCode(t, err, errdefs.ErrFailedPrecondition, "not_a_directory")
}

// TestTarTraversal checks that no entry lands outside the upload directory.
func TestTarTraversal(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	root := t.TempDir()
	outside := root + "/outside"
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		entries []tarEntry
	}{
		{"dot dot", []tarEntry{{name: "../outside/evil", body: "x"}}},
		{"nested dot dot", []tarEntry{{name: "a/b/../../../outside/evil", body: "x"}}},
		{"absolute", []tarEntry{{name: outside + "/evil", body: "x"}}},
		{"through a symlink", []tarEntry{
			{name: "esc", typ: tar.TypeSymlink, link: outside},
			{name: "esc/evil", body: "x"},
		}},
		{"through an existing symlink dir", []tarEntry{
			{name: "sub/", typ: tar.TypeDir},
			{name: "sub/esc", typ: tar.TypeSymlink, link: "../../outside"},
			{name: "sub/esc/evil", body: "x"},
		}},
		{"hard link outside", []tarEntry{{name: "h", typ: tar.TypeLink, link: "../outside/target"}}},
		{"hard link through a symlink", []tarEntry{
			{name: "esc", typ: tar.TypeSymlink, link: outside},
			{name: "h", typ: tar.TypeLink, link: "esc/target"},
		}},
		{"symlink to an absolute path outside", []tarEntry{{name: "l", typ: tar.TypeSymlink, link: "/etc/passwd"}}},
		{"symlink climbing out", []tarEntry{{name: "a/l", typ: tar.TypeSymlink, link: "../../outside/target"}}},
		{"symlink out through an earlier link", []tarEntry{
			{name: "up", typ: tar.TypeSymlink, link: "."},
			{name: "l", typ: tar.TypeSymlink, link: "up/../../outside"},
		}},
		{"good entries, then a bad one", []tarEntry{
			{name: "ok/", typ: tar.TypeDir},
			{name: "ok/file", body: "fine"},
			{name: "ok/esc", typ: tar.TypeSymlink, link: outside},
		}},
	}
	if err := os.WriteFile(outside+"/target", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := root + "/up" + string(rune('a'+i))
			_, err := a.client.UploadTar(ctx, dir, bytes.NewReader(makeTar(t, tt.entries)))
			wantCode(t, err, errdefs.ErrInvalidArgument, "tar_path_outside_dir")
			es, _ := os.ReadDir(outside)
			if len(es) != 1 || es[0].Name() != "target" {
				t.Fatalf("outside dir now holds %v", es)
			}
			// All or nothing: the refused upload left nothing behind.
			if es, _ := os.ReadDir(dir); len(es) != 0 {
				t.Fatalf("the refused upload left %v behind", names(es))
			}
		})
	}

	// A symlink as the final component is replaced, not written through
	// (here one that was already there, pointing outside).
	dir := root + "/final"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside+"/target", dir+"/f"); err != nil {
		t.Fatal(err)
	}
	_, err := a.client.UploadTar(ctx, dir, bytes.NewReader(makeTar(t, []tarEntry{
		{name: "f", body: "replaced"},
		{name: "g", typ: tar.TypeSymlink, link: "f"},
	})))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside + "/target"); string(b) != "keep" {
		t.Fatalf("wrote through a symlink: target is %q", b)
	}
	if b, _ := os.ReadFile(dir + "/g"); string(b) != "replaced" {
		t.Fatalf("g (a link to f) reads %q", b)
	}
}

// TestTarUploadAllOrNothing: an upload that fails part way leaves the
// directory as it was: new entries gone, replaced files back.
func TestTarUploadAllOrNothing(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/keep.txt", []byte("original"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir+"/sub", 0o750); err != nil {
		t.Fatal(err)
	}
	good := makeTar(t, []tarEntry{
		{name: "keep.txt", body: "overwritten"},
		{name: "sub/", typ: tar.TypeDir, mode: 0o777},
		{name: "new/deep/file", body: "new"},
		{name: "link", typ: tar.TypeSymlink, link: "keep.txt"},
	})
	// The stream breaks off in the middle of the last entry.
	broken := append(slices.Clone(good[:len(good)-1024-512]), makeTar(t, []tarEntry{{name: "big", body: strings.Repeat("x", 4096)}})[:700]...)
	_, err := a.client.UploadTar(ctx, dir, bytes.NewReader(broken))
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_tar")
	es, _ := os.ReadDir(dir)
	if got := names(es); strings.Join(got, ",") != "keep.txt,sub" {
		t.Fatalf("after a failed upload the directory holds %v", got)
	}
	if b, _ := os.ReadFile(dir + "/keep.txt"); string(b) != "original" {
		t.Fatalf("keep.txt is %q after a failed upload", b)
	}
	if fi, _ := os.Stat(dir + "/keep.txt"); fi.Mode().Perm() != 0o640 {
		t.Fatalf("keep.txt mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(dir + "/sub"); fi.Mode().Perm() != 0o750 {
		t.Fatalf("sub mode %v after a failed upload", fi.Mode())
	}
	// The same upload, whole, goes through.
	if _, err := a.client.UploadTar(ctx, dir, bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dir + "/link"); string(b) != "overwritten" {
		t.Fatalf("after a good upload: %q", b)
	}
	if es, _ := os.ReadDir(dir); strings.Contains(strings.Join(names(es), ","), ".paddock-upload") {
		t.Fatalf("staging left behind: %v", names(es))
	}
}

func names(es []os.DirEntry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}
