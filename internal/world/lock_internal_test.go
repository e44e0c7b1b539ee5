package world

import (
	"fmt"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestWorldLockSerializesAndGoes: a second action on a world waits for
// the first, and the world's lock leaves the map once neither holds it.
func TestWorldLockSerializesAndGoes(t *testing.T) {
	s := New(Config{})
	release := s.lock("w")
	done := make(chan struct{})
	go func() {
		s.lock("w")()
		close(done)
	}()
	testenv.Eventually(t, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if n := s.locks["w"].users; n != 2 {
			return fmt.Errorf("%d users of the lock", n)
		}
		return nil
	})
	select {
	case <-done:
		t.Fatal("the second action ran while the first held the lock")
	default:
	}
	release()
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.locks) != 0 {
		t.Fatalf("locks left: %v", s.locks)
	}
}
