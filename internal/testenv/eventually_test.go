package testenv_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
)

// fatals is a testing.TB whose Fatalf records the failure and ends the
// calling goroutine, as testing's does.
type fatals struct {
	testing.TB
	failure string
}

func (f *fatals) Helper() {}

func (f *fatals) Fatalf(format string, args ...any) {
	f.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls wait with a fatals in a goroutine of its own and returns the
// failure it reported ("" if none).
func run(t *testing.T, wait func(testing.TB)) string {
	f := &fatals{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(f)
	}()
	<-done
	return f.failure
}

// TestEventually: in a synctest bubble, whose clock only the waiting
// moves, Eventually returns once the condition holds, polls it less
// often as it waits, and fails with the condition's last error once its
// patience is spent.
func TestEventually(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start, calls := time.Now(), 0
		failure := run(t, func(tb testing.TB) {
			testenv.Eventually(tb, func() error {
				if calls++; time.Since(start) < time.Second {
					return errors.New("not yet")
				}
				return nil
			})
		})
		if failure != "" {
			t.Fatalf("a condition that came: %s", failure)
		}
		// At 0, 5, 15, 35, 75, 155, 315 ms, then every quarter second: the
		// tenth call, at 1065 ms, is the first past 1 s.
		if waited := time.Since(start); waited < time.Second || waited > time.Second+250*time.Millisecond || calls != 10 {
			t.Fatalf("returned after %s and %d calls, want just past 1s and 10", waited, calls)
		}

		start, calls = time.Now(), 0
		failure = run(t, func(tb testing.TB) {
			testenv.Eventually(tb, func() error { calls++; return fmt.Errorf("call %d", calls) })
		})
		if waited := time.Since(start); waited < testenv.Patience || waited > testenv.Patience+250*time.Millisecond {
			t.Fatalf("gave up after %s, want %s", waited, testenv.Patience)
		}
		if want := fmt.Sprintf("timed out after %s: call %d", testenv.Patience, calls); failure != want {
			t.Fatalf("failure %q, want %q", failure, want)
		}
	})
}

// TestPoll: Poll reports, rather than fails: nil once the condition holds,
// its last error once the patience given has passed.
func TestPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		if err := testenv.Poll(time.Minute, func() error {
			if calls++; calls < 3 {
				return errors.New("not yet")
			}
			return nil
		}); err != nil || calls != 3 {
			t.Fatalf("Poll of a condition that came = %v after %d calls, want nil after 3", err, calls)
		}
		start := time.Now()
		err := testenv.Poll(time.Second, func() error { return errors.New("never") })
		if waited := time.Since(start); err == nil || err.Error() != "never" || waited < time.Second || waited > time.Second+250*time.Millisecond {
			t.Fatalf("Poll of a condition that never came = %v after %s, want its error after 1s", err, waited)
		}
	})
}

// TestWaitFor: WaitFor names what it waited for when it never comes.
func TestWaitFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		held := false
		if failure := run(t, func(tb testing.TB) {
			testenv.WaitFor(tb, "the flag", func() bool { held = !held; return !held })
		}); failure != "" {
			t.Fatalf("a condition that came: %s", failure)
		}
		failure := run(t, func(tb testing.TB) { testenv.WaitFor(tb, "the flag", func() bool { return false }) })
		if !strings.HasSuffix(failure, ": waiting for the flag") {
			t.Fatalf("failure %q, want it to name the flag", failure)
		}
	})
}
