package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/store/postgres"
)

// TestNotifyReachesEveryListener: a payload one store notifies is heard,
// in order, by the listeners of every store on the database, its own
// included; a listener whose context ends returns nil.
func TestNotifyReachesEveryListener(t *testing.T) {
	dsn := testDSN(t)
	open := func() *postgres.Store {
		s, err := postgres.Open(t.Context(), dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := open(), open()
	type listener struct {
		heard chan string
		done  chan error
	}
	listen := func(ctx context.Context, s *postgres.Store) listener {
		l := listener{heard: make(chan string, 16), done: make(chan error, 1)}
		ready := make(chan struct{})
		go func() { l.done <- s.Listen(ctx, func() { close(ready) }, func(p string) { l.heard <- p }) }()
		select {
		case <-ready:
		case err := <-l.done:
			t.Fatalf("Listen: %v", err)
		}
		return l
	}
	ctx, cancel := context.WithCancel(t.Context())
	la, lb := listen(ctx, a), listen(ctx, b)
	for _, p := range []string{"one", "two"} {
		if err := a.Notify(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []listener{la, lb} {
		for _, want := range []string{"one", "two"} {
			select {
			case got := <-l.heard:
				if got != want {
					t.Fatalf("heard %q, want %q", got, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%q was not heard", want)
			}
		}
	}
	cancel()
	for _, l := range []listener{la, lb} {
		if err := <-l.done; err != nil {
			t.Errorf("Listen after its context ended: %v", err)
		}
	}
}
