package fleetevents

import (
	"errors"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestListensAgain: on a real PostgreSQL, a hub whose listening
// connection is cut ends its streams (what was sent meanwhile is lost:
// their clients read again) and listens again, and hears the other
// replica once more.
func TestListensAgain(t *testing.T) {
	dsn := testenv.Postgres(t)
	open := func() *postgres.Store {
		st, err := postgres.Open(t.Context(), dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	a, b := open(), open()
	hub := New(Config{Replica: "b", Bus: b, Rows: b})
	hub.Start(t.Context(), nil)
	defer hub.Close()
	s := hub.Open()
	if _, err := a.Pool().Exec(t.Context(),
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN paddock_events'"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Ended():
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not end when the hub stopped listening")
	}
	s = hub.Open()
	defer s.Close()
	sent := egressMessage("a", store.EgressDecision{ID: "d1", Host: "pypi.org", At: time.Now()})
	payload, err := sent.encode()
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		if err := a.Notify(t.Context(), payload); err != nil {
			return err
		}
		select {
		case e := <-s.Events():
			if e.Egress == nil || e.Egress.ID != "d1" {
				t.Fatalf("heard %+v", e)
			}
			return nil
		case <-time.After(100 * time.Millisecond):
			return errors.New("not heard yet")
		}
	})
}
