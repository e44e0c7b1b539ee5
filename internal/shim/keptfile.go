package shim

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
)

// keptFile is a kernel file the agent reads on every process's start or
// end (a cgroup's counters, /proc/sys): opened at the first read and kept
// open, since such a file gives its value anew at each read from its
// start (pread), one system call where an open, a read and a close were
// three. The first of names that opens is kept. A failure to open that
// may pass (out of descriptors or memory, an interrupt) is tried again at
// the next read; any other means none of them is there (gVisor has
// neither of the agent's), and is remembered.
type keptFile struct {
	names []string

	mu     sync.Mutex
	f      *os.File
	absent bool
}

// read reads the file from its start into buf, and reports whether it
// could.
func (k *keptFile) read(buf []byte) (int, bool) {
	f := k.file()
	if f == nil {
		return 0, false
	}
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	return n, true
}

// file returns the kept file, opening it if it is not yet, or nil.
func (k *keptFile) file() *os.File {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.f != nil || k.absent {
		return k.f
	}
	for _, name := range k.names {
		f, err := os.Open(name)
		if err == nil {
			k.f = f
			return f
		}
		if mayPass(err) {
			return nil // tried again at the next read
		}
	}
	k.absent = true
	return nil
}

// mayPass reports whether an open failed for a reason that may pass.
func mayPass(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
