package e2e

import (
	"archive/tar"
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

func TestFiles(t *testing.T) {
	s := runningSandbox(t)
	ctx := bounded(t)
	c, rid := s.sdk, s.rid

	// Write, describe, read back.
	data := bytes.Repeat([]byte("paddock\x00\xff"), 100_000)
	fi, err := c.WriteFile(ctx, "acme", "dev", rid, "/workspace/a/b/data.bin", bytes.NewReader(data), pc.WriteFileOptions{Mode: 0o640})
	if err != nil {
		t.Fatal(err)
	}
	if fi.Type != pc.FileTypeFile || fi.Size != int64(len(data)) || fi.Mode != 0o640 || fi.Path != "/workspace/a/b/data.bin" {
		t.Fatalf("written %+v", fi)
	}
	r, err := c.ReadFile(ctx, "acme", "dev", rid, "/workspace/a/b/data.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) || r.Size != int64(len(data)) || r.Mode != 0o640 || r.ModifiedAt.IsZero() {
		t.Fatalf("read back %d bytes (%v), size %d mode %o", len(got), err, r.Size, r.Mode)
	}
	// What the API wrote is what a process in the sandbox sees.
	if out := s.run(t, "sh", "-c", "wc -c < /workspace/a/b/data.bin"); strings.TrimSpace(out) != strconv.Itoa(len(data)) {
		t.Fatalf("wc in the sandbox: %q", out)
	}
	rr, err := c.ReadFileRange(ctx, "acme", "dev", rid, "/workspace/a/b/data.bin", 7, 3)
	if err != nil {
		t.Fatal(err)
	}
	if part, _ := io.ReadAll(rr); string(part) != "\x00\xffp" {
		t.Fatalf("range %q", part)
	}
	rr.Close()

	// Rename: moves, refuses to replace when asked, says what is missing.
	s.run(t, "sh", "-c", "echo one > /workspace/r1 && echo two > /workspace/r2")
	if _, err := c.Rename(ctx, "acme", "dev", rid, pc.RenameRequest{From: "/workspace/r1", To: "/workspace/r2", NoOverwrite: true}); pc.Code(err) != "file_exists" {
		t.Fatalf("rename over an existing file with no_overwrite: %v", err)
	}
	moved, err := c.Rename(ctx, "acme", "dev", rid, pc.RenameRequest{From: "/workspace/r1", To: "/workspace/r3"})
	if err != nil || moved.Path != "/workspace/r3" || moved.Size != 4 {
		t.Fatalf("rename: %+v, %v", moved, err)
	}
	if out := s.run(t, "sh", "-c", "cat /workspace/r3; test -e /workspace/r1 || echo gone"); out != "one\ngone\n" {
		t.Fatalf("after rename: %q", out)
	}
	if _, err := c.Rename(ctx, "acme", "dev", rid, pc.RenameRequest{From: "/workspace/r1", To: "/workspace/r4"}); pc.Code(err) != "file_not_found" {
		t.Fatalf("rename of a missing file: %v", err)
	}

	if _, err := c.Mkdir(ctx, "acme", "dev", rid, pc.MkdirRequest{Path: "/workspace/a/empty", Mode: 0o700}); err != nil {
		t.Fatal(err)
	}
	st, err := c.StatFile(ctx, "acme", "dev", rid, "/workspace/a")
	if err != nil || !st.IsDir() {
		t.Fatalf("stat dir %+v %v", st, err)
	}
	list, err := c.ListFiles(ctx, "acme", "dev", rid, "/workspace/a", pc.ListFilesOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list.Items {
		names = append(names, e.Path+":"+e.Type)
	}
	sort.Strings(names)
	if want := "/workspace/a/b/data.bin:file /workspace/a/b:directory /workspace/a/empty:directory"; strings.Join(names, " ") != want || list.Truncated {
		t.Fatalf("listing %v (truncated %v), want %s", names, list.Truncated, want)
	}

	// A directory round trip through tar.
	tr, err := c.DownloadTar(ctx, "acme", "dev", rid, "/workspace/a")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.UploadTar(ctx, "acme", "dev", rid, "/tmp/copy", tr)
	tr.Close()
	if err != nil || res.Bytes != int64(len(data)) {
		t.Fatalf("tar round trip %+v %v", res, err)
	}
	if cp, err := c.StatFile(ctx, "acme", "dev", rid, "/tmp/copy/b/data.bin"); err != nil || cp.Size != int64(len(data)) || cp.Mode != 0o640 {
		t.Fatalf("copied file %+v %v", cp, err)
	}

	// Removal.
	if err := c.DeleteFile(ctx, "acme", "dev", rid, "/workspace/a", false); !pc.IsCode(err, "directory_not_empty") {
		t.Fatalf("removing a full directory without recursive: %v", err)
	}
	if err := c.DeleteFile(ctx, "acme", "dev", rid, "/workspace/a", true); err != nil {
		t.Fatal(err)
	}

	// Errors keep their meaning through the API.
	roCode, roKind := readOnlyRootRefusal(t)
	errorCases := []struct {
		name string
		call func() error
		code string
		kind error
	}{
		{"missing file", func() error { _, err := c.ReadFile(ctx, "acme", "dev", rid, "/workspace/a/b/data.bin"); return err }, "file_not_found", pc.ErrNotFound},
		{"read a directory", func() error { _, err := c.ReadFile(ctx, "acme", "dev", rid, "/tmp"); return err }, "is_a_directory", pc.ErrFailedPrecondition},
		{"read-only root", func() error {
			_, err := c.WriteFile(ctx, "acme", "dev", rid, "/etc/evil", strings.NewReader("x"), pc.WriteFileOptions{})
			return err
		}, roCode, roKind},
		{"no overwrite", func() error {
			_, err := c.WriteFile(ctx, "acme", "dev", rid, "/tmp/copy/b/data.bin", strings.NewReader("x"), pc.WriteFileOptions{NoOverwrite: true})
			return err
		}, "file_exists", pc.ErrConflict},
		{"relative path", func() error { _, err := c.StatFile(ctx, "acme", "dev", rid, "tmp"); return err }, "invalid_path", pc.ErrInvalidArgument},
		{"empty path", func() error { return c.DeleteFile(ctx, "acme", "dev", rid, "", false) }, "invalid_path", pc.ErrInvalidArgument},
		{"NUL in path", func() error {
			_, err := c.ListFiles(ctx, "acme", "dev", rid, "/tmp/\x00", pc.ListFilesOptions{})
			return err
		}, "invalid_path", pc.ErrInvalidArgument},
		{"tar escaping its directory", func() error {
			_, err := c.UploadTar(ctx, "acme", "dev", rid, "/tmp/x", bytes.NewReader(tarOf(t, "../escaped", "boo")))
			return err
		}, "tar_path_outside_dir", pc.ErrInvalidArgument},
		{"not a tar", func() error {
			_, err := c.UploadTar(ctx, "acme", "dev", rid, "/tmp/x", strings.NewReader(strings.Repeat("garbage!", 200)))
			return err
		}, "invalid_tar", pc.ErrInvalidArgument},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !pc.IsCode(err, tt.code) || !errors.Is(err, tt.kind) {
				t.Fatalf("got %v, want %s (%v)", err, tt.code, tt.kind)
			}
		})
	}
	if out := s.run(t, "sh", "-c", "ls /tmp/escaped /escaped 2>&1; true"); strings.Contains(out, "boo") || !strings.Contains(out, "No such file") {
		t.Fatalf("the escaping entry landed somewhere: %q", out)
	}
}

// tarOf returns a tar holding one file.
func tarOf(t *testing.T, name, content string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tw, content)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestLargeFileRoundTrip sends a file of 1 GiB (PADDOCK_E2E_FILE_MB for
// another size) up and back down through the API, comparing checksums, and
// checks that the server streamed it rather than holding it in memory.
func TestLargeFileRoundTrip(t *testing.T) {
	size := testenv.FileSize(t, "PADDOCK_E2E_FILE_MB", 1<<30)
	s := defaultSandbox(t)
	ctx := bounded(t)
	const path = "/workspace/big.bin"
	table := crc32.MakeTable(crc32.Castagnoli)

	peak := testenv.HeapPeak()
	up := crc32.New(table)
	start := time.Now()
	fi, err := s.sdk.WriteFile(ctx, "acme", "dev", s.rid, path, io.TeeReader(testenv.PatternReader(size), up), pc.WriteFileOptions{})
	if err != nil || fi.Size != size {
		t.Fatalf("upload: %+v %v", fi, err)
	}
	upTime := time.Since(start)

	start = time.Now()
	r, err := s.sdk.ReadFile(ctx, "acme", "dev", s.rid, path)
	if err != nil {
		t.Fatal(err)
	}
	down := crc32.New(table)
	n, err := io.CopyBuffer(down, r, make([]byte, 256<<10))
	r.Close()
	if err != nil || n != size {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	downTime := time.Since(start)
	heap := peak()

	if up.Sum32() != down.Sum32() {
		t.Fatalf("checksum up %08x, down %08x", up.Sum32(), down.Sum32())
	}
	mbps := func(d time.Duration) float64 { return float64(size) / d.Seconds() / 1e6 }
	t.Logf("%d MiB: upload %.0f MB/s, download %.0f MB/s, heap grew by %d MiB", size>>20, mbps(upTime), mbps(downTime), heap>>20)
	if heap > 256<<20 {
		t.Fatalf("the heap grew by %d MiB: the transfer was buffered, not streamed", heap>>20)
	}
}
