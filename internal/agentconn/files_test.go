package agentconn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestFiles(t *testing.T) {
	a := startAgent(t, shim.Options{})
	c := a.client
	ctx := ctxT(t)
	dir := t.TempDir()

	// Write, stat, read back.
	info, err := c.WriteFile(ctx, dir+"/sub/a.txt", strings.NewReader("hello world"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != 11 || info.Mode != 0o600 || info.Name != "a.txt" || info.Path != dir+"/sub/a.txt" {
		t.Fatalf("write info %+v", info)
	}
	if b, err := os.ReadFile(dir + "/sub/a.txt"); err != nil || string(b) != "hello world" {
		t.Fatalf("on disk: %q %v", b, err)
	}
	readAll := func(r io.ReadCloser, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := readAll(c.ReadFile(ctx, dir+"/sub/a.txt")); got != "hello world" {
		t.Fatalf("read %q", got)
	}
	if got := readAll(c.ReadFileRange(ctx, dir+"/sub/a.txt", 6, 3)); got != "wor" {
		t.Fatalf("read range %q", got)
	}
	if got := readAll(c.ReadFileRange(ctx, dir+"/sub/a.txt", 100, 0)); got != "" {
		t.Fatalf("read past the end %q", got)
	}
	// Overwriting keeps the mode unless one is given.
	if info, err := c.WriteFile(ctx, dir+"/sub/a.txt", strings.NewReader("v2"), 0); err != nil || info.Mode != 0o600 || info.Size != 2 {
		t.Fatalf("overwrite: %+v %v", info, err)
	}
	if info, err := c.WriteFile(ctx, dir+"/new.txt", strings.NewReader(""), 0); err != nil || info.Mode != 0o644 || info.Size != 0 {
		t.Fatalf("new empty file: %+v %v", info, err)
	}
	if got := readAll(c.ReadFile(ctx, dir+"/new.txt")); got != "" {
		t.Fatalf("read empty file %q", got)
	}
	if info, err := c.WriteFileWith(ctx, dir+"/x.sh", strings.NewReader("#!/bin/sh\n"), agentconn.WriteOptions{Mode: 0o755 | fs.ModeSetgid}); err != nil || info.Mode != 0o755|fs.ModeSetgid {
		t.Fatalf("write with setgid: %+v %v", info, err)
	}

	// Directories.
	if info, err := c.MkdirAll(ctx, dir+"/d/e/f", 0o700); err != nil || !info.IsDir() || info.Mode.Perm() != 0o700 {
		t.Fatalf("mkdir -p: %+v %v", info, err)
	}
	if _, err := c.MkdirAll(ctx, dir+"/d/e/f", 0); err != nil {
		t.Fatalf("mkdir -p again: %v", err)
	}
	if _, err := c.Mkdir(ctx, dir+"/d/g", 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../sub/a.txt", dir+"/d/link"); err != nil {
		t.Fatal(err)
	}
	if fi, err := c.Lstat(ctx, dir+"/d/link"); err != nil || fi.Mode&fs.ModeSymlink == 0 || fi.SymlinkTarget != "../sub/a.txt" {
		t.Fatalf("lstat link: %+v %v", fi, err)
	}
	if fi, err := c.Stat(ctx, dir+"/d/link"); err != nil || !fi.Mode.IsRegular() || fi.Size != 2 {
		t.Fatalf("stat link: %+v %v", fi, err)
	}

	// Listing.
	names := func(es []agentconn.FileInfo) string {
		var s []string
		for _, e := range es {
			s = append(s, strings.TrimPrefix(e.Path, dir+"/"))
		}
		return strings.Join(s, " ")
	}
	listTests := []struct {
		name      string
		opts      agentconn.ListOptions
		want      string
		truncated bool
	}{
		{"flat", agentconn.ListOptions{}, "d new.txt sub x.sh", false},
		{"recursive", agentconn.ListOptions{Recursive: true}, "d d/e d/e/f d/g d/link new.txt sub sub/a.txt x.sh", false},
		{"depth", agentconn.ListOptions{Recursive: true, MaxDepth: 2}, "d d/e d/g d/link new.txt sub sub/a.txt x.sh", false},
		{"bounded", agentconn.ListOptions{Recursive: true, MaxEntries: 3}, "d d/e d/e/f", true},
	}
	for _, tt := range listTests {
		t.Run("list "+tt.name, func(t *testing.T) {
			es, truncated, err := c.List(ctx, dir, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if names(es) != tt.want || truncated != tt.truncated {
				t.Fatalf("got %q truncated=%v, want %q truncated=%v", names(es), truncated, tt.want, tt.truncated)
			}
		})
	}

	// Rename and remove.
	if err := c.Rename(ctx, dir+"/new.txt", dir+"/d/moved.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/d/moved.txt"); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, dir+"/d/moved.txt"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveAll(ctx, dir+"/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/d"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after RemoveAll: %v", err)
	}
}

func TestFileErrors(t *testing.T) {
	a := startAgent(t, shim.Options{})
	c := a.client
	ctx := ctxT(t)
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(dir+"/file", []byte("x"), 0o644))
	must(os.WriteFile(dir+"/other", []byte("y"), 0o644))
	must(os.MkdirAll(dir+"/full/sub", 0o755))
	must(os.Mkdir(dir+"/empty", 0o755))
	read := func(p string) error {
		r, err := c.ReadFile(ctx, p)
		if err == nil {
			r.Close()
		}
		return err
	}
	write := func(p string, opts agentconn.WriteOptions) error {
		_, err := c.WriteFileWith(ctx, p, strings.NewReader("data"), opts)
		return err
	}
	tests := []struct {
		name string
		err  error
		kind error
		code string
	}{
		{"stat relative", func() error { _, err := c.Stat(ctx, "etc/passwd"); return err }(), errdefs.ErrInvalidArgument, "invalid_path"},
		{"stat empty", func() error { _, err := c.Stat(ctx, ""); return err }(), errdefs.ErrInvalidArgument, "invalid_path"},
		{"stat NUL", func() error { _, err := c.Stat(ctx, "/etc/\x00passwd"); return err }(), errdefs.ErrInvalidArgument, "invalid_path"},
		{"stat missing", func() error { _, err := c.Stat(ctx, dir+"/missing"); return err }(), errdefs.ErrNotFound, "file_not_found"},
		{"stat through a file", func() error { _, err := c.Stat(ctx, dir+"/file/x"); return err }(), errdefs.ErrFailedPrecondition, "not_a_directory"},
		{"read missing", read(dir + "/missing"), errdefs.ErrNotFound, "file_not_found"},
		{"read directory", read(dir), errdefs.ErrFailedPrecondition, "is_a_directory"},
		{"read relative", read("relative"), errdefs.ErrInvalidArgument, "invalid_path"},
		{"read negative range", func() error { _, err := c.ReadFileRange(ctx, dir+"/file", -1, 0); return err }(), errdefs.ErrInvalidArgument, "invalid_range"},
		{"write without parent", write(dir+"/nope/f", agentconn.WriteOptions{}), errdefs.ErrNotFound, "file_not_found"},
		{"write onto a directory", write(dir+"/full", agentconn.WriteOptions{}), errdefs.ErrFailedPrecondition, "is_a_directory"},
		{"write no overwrite", write(dir+"/file", agentconn.WriteOptions{NoOverwrite: true}), errdefs.ErrConflict, "file_exists"},
		{"write relative", write("f", agentconn.WriteOptions{}), errdefs.ErrInvalidArgument, "invalid_path"},
		{"write bad mode", write(dir+"/m", agentconn.WriteOptions{Mode: fs.ModeDir | 0o755}), nil, ""},
		{"mkdir existing", func() error { _, err := c.Mkdir(ctx, dir+"/full", 0); return err }(), errdefs.ErrConflict, "file_exists"},
		{"mkdir without parent", func() error { _, err := c.Mkdir(ctx, dir+"/a/b", 0); return err }(), errdefs.ErrNotFound, "file_not_found"},
		{"mkdir -p over a file", func() error { _, err := c.MkdirAll(ctx, dir+"/file/sub", 0); return err }(), errdefs.ErrFailedPrecondition, "not_a_directory"},
		{"list a file", func() error { _, _, err := c.List(ctx, dir+"/file", agentconn.ListOptions{}); return err }(), errdefs.ErrFailedPrecondition, "not_a_directory"},
		{"list missing", func() error { _, _, err := c.List(ctx, dir+"/missing", agentconn.ListOptions{}); return err }(), errdefs.ErrNotFound, "file_not_found"},
		{"list negative", func() error { _, _, err := c.List(ctx, dir, agentconn.ListOptions{MaxEntries: -1}); return err }(), errdefs.ErrInvalidArgument, "invalid_limit"},
		{"remove missing", c.Remove(ctx, dir+"/missing"), errdefs.ErrNotFound, "file_not_found"},
		{"removeall missing", c.RemoveAll(ctx, dir+"/missing"), errdefs.ErrNotFound, "file_not_found"},
		{"remove non-empty", c.Remove(ctx, dir+"/full"), errdefs.ErrFailedPrecondition, "directory_not_empty"},
		{"remove root", c.RemoveAll(ctx, "/"), errdefs.ErrInvalidArgument, "invalid_path"},
		{"rename missing", c.Rename(ctx, dir+"/missing", dir+"/x"), errdefs.ErrNotFound, "file_not_found"},
		{"rename no replace", c.RenameNoReplace(ctx, dir+"/file", dir+"/other"), errdefs.ErrConflict, "file_exists"},
		{"rename file onto a directory", c.Rename(ctx, dir+"/file", dir+"/empty"), errdefs.ErrConflict, "file_exists"},
		{"rename relative", c.Rename(ctx, "a", dir+"/x"), errdefs.ErrInvalidArgument, "invalid_path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.kind == nil {
				// Type bits in a mode are ignored; only permissions travel.
				if tt.err != nil {
					t.Fatal(tt.err)
				}
				return
			}
			wantCode(t, tt.err, tt.kind, tt.code)
		})
	}
	// Nothing was changed by the refused writes, and no temporary file is left.
	if b, _ := os.ReadFile(dir + "/file"); string(b) != "x" {
		t.Fatalf("file changed to %q", b)
	}
	assertNoTemp(t, dir)
}

// assertNoTemp fails if a write's temporary file is left in dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".paddock-write-") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

// TestWriteAtomic checks that a write that fails midway leaves the target
// as it was.
func TestWriteAtomic(t *testing.T) {
	// The directory goes after the agent has stopped (cleanups run last
	// first): a write the agent is still ending may make and remove its
	// temporary file after the checks below.
	dir := t.TempDir()
	a := startAgent(t, shim.Options{})
	target := dir + "/f"
	if err := os.WriteFile(target, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	pr, pw := io.Pipe()
	go func() {
		// Half a megabyte, then the caller gives up.
		pw.Write(bytes.Repeat([]byte("n"), 512<<10))
		cancel()
		pw.CloseWithError(errors.New("source failed"))
	}()
	if _, err := a.client.WriteFile(ctx, target, pr, 0); err == nil {
		t.Fatal("write succeeded")
	}
	if b, _ := os.ReadFile(target); string(b) != "original" {
		t.Fatalf("target is %.20q after a failed write", b)
	}
	// The agent removes its temporary file when it sees the call end,
	// and nothing is left once it has stopped (its write ended).
	onlyTarget := func() error {
		if es, _ := os.ReadDir(dir); len(es) != 1 {
			return fmt.Errorf("left in %s: %v", dir, es)
		}
		return nil
	}
	testenv.Eventually(t, onlyTarget)
	a.stop()
	testenv.Eventually(t, onlyTarget)
}

// TestLargeFile streams a large file both ways with a checksum, holding
// memory bounded on both sides (client and agent share this process).
func TestLargeFile(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	dir, err := os.MkdirTemp("", "pdk-large")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "big.bin")

	table := crc32.MakeTable(crc32.Castagnoli)
	stop := testenv.HeapPeak()
	start := time.Now()
	wantSum := crc32.New(table)
	info, err := a.client.WriteFile(ctx, path, io.TeeReader(testenv.PatternReader(size), wantSum), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != size {
		t.Fatalf("wrote %d bytes, want %d", info.Size, size)
	}
	upload := time.Since(start)

	start = time.Now()
	r, err := a.client.ReadFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	gotSum := crc32.New(table)
	n, err := io.Copy(gotSum, r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	download := time.Since(start)
	peak := stop()
	if n != size || gotSum.Sum32() != wantSum.Sum32() {
		t.Fatalf("read %d bytes crc %08x, want %d bytes crc %08x", n, gotSum.Sum32(), size, wantSum.Sum32())
	}
	mb := float64(size) / (1 << 20)
	t.Logf("%d MiB: upload %v (%.0f MiB/s), download %v (%.0f MiB/s), heap grew by %d MiB",
		size>>20, upload.Round(time.Millisecond), mb/upload.Seconds(), download.Round(time.Millisecond), mb/download.Seconds(), peak>>20)
	if peak > 256<<20 {
		t.Fatalf("the heap grew by %d MiB: the file was not streamed", peak>>20)
	}
}

// TestReadNonRegular: a FIFO, a socket and a device are refused with
// not_a_regular_file, at once (a FIFO with no writer never blocks the call).
func TestReadNonRegular(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Second)
	defer cancel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(dir+"/fifo", 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", dir+"/sock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Symlink(dir+"/fifo", dir+"/link-to-fifo"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir + "/fifo", dir + "/sock", dir + "/link-to-fifo", "/dev/null"} {
		r, err := a.client.ReadFile(ctx, p)
		if err == nil {
			r.Close()
		}
		wantCode(t, err, errdefs.ErrFailedPrecondition, "not_a_regular_file")
	}
	if ctx.Err() != nil {
		t.Fatal("reading a FIFO blocked")
	}
}

// writeRecorder keeps what is written to it and the size of every write.
type writeRecorder struct {
	bytes.Buffer
	sizes []int
	fail  error // returned by every write once set
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	if w.fail != nil {
		return 0, w.fail
	}
	w.sizes = append(w.sizes, len(p))
	return w.Buffer.Write(p)
}

// TestFileReaderWriteTo checks that a file read through WriteTo (which
// io.Copy calls) arrives whole, after a partial Read too, in writes of
// the agent's messages (a file moves in chunks of 1 MiB, not 256 KiB),
// and that a failing writer stops it with its error.
func TestFileReaderWriteTo(t *testing.T) {
	a := startAgent(t, shim.Options{})
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "f")
	const size = 3<<20 + 12345
	want, err := io.ReadAll(testenv.PatternReader(size))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := a.client.ReadFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head := make([]byte, 100)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	var w writeRecorder
	n, err := r.WriteTo(&w)
	if err != nil || n != size-100 {
		t.Fatalf("WriteTo = %d, %v; want %d bytes", n, err, size-100)
	}
	if got := append(head, w.Bytes()...); !bytes.Equal(got, want) {
		t.Fatal("the file read back differs")
	}
	if n, err := r.WriteTo(&w); n != 0 || err != nil {
		t.Fatalf("WriteTo at the end = %d, %v", n, err)
	}
	if biggest := slices.Max(w.sizes); biggest != 1<<20 {
		t.Fatalf("the largest write was %d bytes, want one message of 1 MiB", biggest)
	}

	r2, err := a.client.ReadFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	boom := errors.New("boom")
	if _, err := r2.WriteTo(&writeRecorder{fail: boom}); !errors.Is(err, boom) {
		t.Fatalf("WriteTo into a failing writer: %v", err)
	}
}
