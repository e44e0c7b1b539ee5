package shim

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestKeptFile reads a file kept open again from its start, its content
// as it is now; remembers that none of its names is there; and opens it
// again after a failure that passes (the process out of descriptors).
func TestKeptFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "count")
	if err := os.WriteFile(name, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(k *keptFile) (string, bool) {
		var b [16]byte
		n, ok := k.read(b[:])
		return string(b[:n]), ok
	}

	k := &keptFile{names: []string{filepath.Join(dir, "missing"), name}}
	if got, ok := read(k); !ok || got != "1\n" {
		t.Fatalf("first read: %q, %v", got, ok)
	}
	if err := os.WriteFile(name, []byte("22\n"), 0o600); err != nil { // the same file, truncated
		t.Fatal(err)
	}
	if got, ok := read(k); !ok || got != "22\n" {
		t.Fatalf("read after a change: %q, %v; want the new content", got, ok)
	}

	absent := &keptFile{names: []string{filepath.Join(dir, "later")}}
	if _, ok := read(absent); ok {
		t.Fatal("a file that is not there was read")
	}
	if err := os.WriteFile(filepath.Join(dir, "later"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := read(absent); ok {
		t.Fatal("a file found absent was opened later: absence is remembered")
	}

	// Out of descriptors: the soft limit at the lowest free one.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	lowest := f.Fd()
	f.Close()
	passing := &keptFile{names: []string{name}}
	low := lim
	low.Cur = uint64(lowest)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	_, ok := read(passing)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Fatal("read with no descriptor free")
	}
	if got, ok := read(passing); !ok || got != "22\n" {
		t.Fatalf("read once descriptors were free again: %q, %v", got, ok)
	}
}
