package testenv

import (
	"fmt"
	"testing"
	"time"
)

// Patience is how long Eventually waits for a condition: long enough for a
// loaded machine, so that only a condition that never comes fails a test.
const Patience = 3 * time.Minute

// Eventually calls cond until it returns nil, and fails t with cond's last
// error if Patience passes first. The pause between calls starts short and
// doubles up to a quarter of a second, so a condition that comes at once is
// seen at once and a slow one is not polled hard. It is how a test waits on
// what gives no signal (a process, a socket, a container, a file, another
// process's log); what does give one is waited on directly.
func Eventually(t testing.TB, cond func() error) {
	t.Helper()
	if err := Poll(Patience, cond); err != nil {
		t.Fatalf("timed out after %s: %v", Patience, err)
	}
}

// Poll is Eventually's loop, for a helper that reports rather than fails:
// it returns nil once cond does, or cond's last error once patience has
// passed.
func Poll(patience time.Duration, cond func() error) error {
	deadline := time.Now().Add(patience)
	pause := 5 * time.Millisecond
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, 250*time.Millisecond)
	}
}

// WaitFor is Eventually for a condition that holds or not; what names it
// in the failure.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Eventually(t, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("waiting for %s", what)
	})
}
