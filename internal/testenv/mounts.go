package testenv

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// DiskDir returns a directory for a Docker provider's workspace disks
// (loop-mounted filesystems), all of them unmounted and removed when t ends.
func DiskDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "pdkdisk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		UnmountUnder(d)
		_ = os.RemoveAll(d)
	})
	return d
}

// UnmountUnder detaches every mount at or below dir, deepest first: the
// workspace disks and run directory a test's provider left mounted.
func UnmountUnder(dir string) {
	points := MountsUnder(dir)
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, mp := range points {
		_ = unix.Unmount(mp, unix.MNT_DETACH)
	}
}

// MountsUnder lists the mount points at or below dir (/proc/self/mountinfo).
func MountsUnder(dir string) []string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		// Field 5 is the mount point, with spaces and the like octal-escaped.
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	return points
}

func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			n := 0
			for _, c := range s[i+1 : i+4] {
				n = n*8 + int(c-'0')
			}
			b.WriteByte(byte(n))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// LoopsOf lists the loop devices whose backing file is img (or was, before
// it was deleted).
func LoopsOf(img string) []string {
	return loops(func(back string) bool { return back == img || back == img+" (deleted)" })
}

// LoopsOfSettled is LoopsOf once the count is want, or after a minute:
// the kernel detaches an auto-clearing loop device once its last user
// closes it, which may come a moment after the unmount returns.
func LoopsOfSettled(img string, want int) []string {
	var got []string
	_ = Poll(time.Minute, func() error {
		if got = LoopsOf(img); len(got) != want {
			return errors.New("not settled")
		}
		return nil
	})
	return got
}

// LoopsUnder lists the loop devices whose backing file is below dir.
func LoopsUnder(dir string) []string {
	return loops(func(back string) bool { return strings.HasPrefix(back, dir+"/") })
}

// loops lists the loop devices whose backing file matches.
func loops(match func(backingFile string) bool) []string {
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // detached meanwhile
		}
		if match(strings.TrimSpace(string(b))) {
			out = append(out, filepath.Base(filepath.Dir(filepath.Dir(f))))
		}
	}
	return out
}
