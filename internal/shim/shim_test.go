package shim

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRing(t *testing.T) {
	type read struct {
		off      int64
		want     string
		wantLost int64
	}
	tests := []struct {
		name       string
		cap        int
		writes     []string
		start, end int64
		reads      []read
	}{
		{
			name: "fits", cap: 10, writes: []string{"abc", "de"}, start: 0, end: 5,
			reads: []read{{0, "abcde", 0}, {3, "de", 0}, {5, "", 0}, {9, "", 0}},
		},
		{
			name: "exactly full", cap: 4, writes: []string{"ab", "cd"}, start: 0, end: 4,
			reads: []read{{0, "abcd", 0}},
		},
		{
			name: "wraps", cap: 4, writes: []string{"abc", "def"}, start: 2, end: 6,
			reads: []read{{0, "cdef", 2}, {1, "cdef", 1}, {2, "cdef", 0}, {5, "f", 0}},
		},
		{
			name: "write larger than capacity", cap: 4, writes: []string{"ab", "0123456789"}, start: 8, end: 12,
			reads: []read{{0, "6789", 8}, {10, "89", 0}},
		},
		{
			name: "many small writes", cap: 5, writes: strings.Split("abcdefghijklmnopqrstuvwxyz", ""), start: 21, end: 26,
			reads: []read{{0, "vwxyz", 21}, {24, "yz", 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(tt.cap)
			for _, w := range tt.writes {
				r.write([]byte(w))
			}
			if r.start != tt.start || r.end != tt.end {
				t.Fatalf("kept [%d, %d), want [%d, %d)", r.start, r.end, tt.start, tt.end)
			}
			if len(r.buf) > tt.cap {
				t.Fatalf("buffer grew to %d, past its capacity %d", len(r.buf), tt.cap)
			}
			for _, rd := range tt.reads {
				p := make([]byte, 64)
				n, lost := r.readAt(rd.off, p)
				if string(p[:n]) != rd.want || lost != rd.wantLost {
					t.Errorf("readAt(%d) = %q lost %d, want %q lost %d", rd.off, p[:n], lost, rd.want, rd.wantLost)
				}
			}
			if got := r.space(r.start); got != tt.cap-int(r.end-r.start) {
				t.Errorf("space %d", got)
			}
		})
	}
}

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"/", "/", true},
		{"/a/b/../c/", "/a/c", true},
		{"/../..", "/", true},
		{"//x", "/x", true},
		{"", "", false},
		{"a/b", "", false},
		{"./a", "", false},
		{"/a\x00b", "", false},
	}
	for _, tt := range tests {
		got, err := cleanPath(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("cleanPath(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		var re *rpcError
		if err != nil && (!errors.As(err, &re) || re.reason != "invalid_path" || re.kind != kindInvalid) {
			t.Errorf("cleanPath(%q) error %v is not invalid_path", tt.in, err)
		}
	}
}

func TestExtractTarget(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc", dir+"/link"); err != nil {
		t.Fatal(err)
	}
	x := &extractor{dir: dir}
	tests := []struct {
		name, want string
		reason     string
	}{
		{name: "a/b/c", want: dir + "/a/b/c"},
		{name: "./a/./d", want: dir + "/a/d"},
		{name: ".", want: dir},
		{name: "a/../e", want: dir + "/e"},
		{name: "link", want: dir + "/link"}, // replaced, not followed
		{name: "../x", reason: "tar_path_outside_dir"},
		{name: "a/../../x", reason: "tar_path_outside_dir"},
		{name: "/etc/passwd", reason: "tar_path_outside_dir"},
		{name: "link/passwd", reason: "tar_path_outside_dir"},
		{name: "a\x00b", reason: "tar_path_outside_dir"},
	}
	for _, tt := range tests {
		got, err := x.target(tt.name)
		var re *rpcError
		switch {
		case tt.reason == "" && (err != nil || got != tt.want):
			t.Errorf("target(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		case tt.reason != "" && (!errors.As(err, &re) || re.reason != tt.reason):
			t.Errorf("target(%q) = %q, %v; want %s", tt.name, got, err, tt.reason)
		}
	}
}

// TestReaperOrphans checks that an orphaned grandchild, re-parented to the
// reaper's process, is waited for and does not stay a zombie.
func TestReaperOrphans(t *testing.T) {
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	r, err := StartReaper(log)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if _, err := StartReaper(log); err == nil {
		t.Fatal("a second reaper started")
	}

	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	exited := make(chan syscall.WaitStatus, 1)
	pid, err := r.Start(func() (int, error) {
		return syscall.ForkExec("/bin/sh", []string{"sh", "-c", "sleep 1000 & echo $!"}, &syscall.ProcAttr{
			Files: []uintptr{devnull.Fd(), pw.Fd(), pw.Fd()},
			Sys:   &syscall.SysProcAttr{Setpgid: true},
		})
	}, func(ws syscall.WaitStatus) { exited <- ws })
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(orphan, syscall.SIGKILL)
	if ws := <-exited; !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("child %d ended with %v", pid, ws)
	}
	// The shell is gone; its background sleep now belongs to us.
	if ppid := statusField(t, orphan, "PPid"); ppid != strconv.Itoa(os.Getpid()) {
		t.Fatalf("orphan's parent is %s, want this process (%d)", ppid, os.Getpid())
	}
	before := r.Orphans()
	if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", orphan)); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("orphan %d not reaped: state %s", orphan, statusField(t, orphan, "State"))
	})
	if r.Orphans() != before+1 {
		t.Fatalf("orphans reaped: %d, want %d", r.Orphans(), before+1)
	}
}

// statusField returns a field of /proc/<pid>/status.
func statusField(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "gone"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
