package testenv

import (
	"path/filepath"
	"runtime"
	"testing"
)

// outcome records whether a check skipped or failed the test it was given,
// and stops the check there as testing does. Only what missing calls is
// implemented; anything else would panic on the nil TB.
type outcome struct {
	testing.TB
	got string
}

func (o *outcome) Helper()               {}
func (o *outcome) Skip(...any)           { o.got = "skip"; runtime.Goexit() }
func (o *outcome) Fatalf(string, ...any) { o.got = "fail"; runtime.Goexit() }

// run calls check with o and waits for it, however it ends.
func (o *outcome) run(check func(testing.TB)) string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(o)
		o.got = "pass"
	}()
	<-done
	return o.got
}

// TestMissingPostgresSkipsOrFails: without PostgreSQL's binaries a test
// that needs them skips, unless PADDOCK_REQUIRE_POSTGRES is set (as
// scripts/test.sh sets it), where it fails.
func TestMissingPostgresSkipsOrFails(t *testing.T) {
	saved := debianInitdb
	t.Cleanup(func() { debianInitdb = saved })
	debianInitdb = filepath.Join(t.TempDir(), "*", "bin", "initdb")
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	for require, want := range map[string]string{"": "skip", "1": "fail"} {
		t.Setenv(RequirePostgresEnv, require)
		if got := (&outcome{}).run(RequirePostgres); got != want {
			t.Errorf("%s=%q: the test would %s; want %s", RequirePostgresEnv, require, got, want)
		}
	}
}
