package dialect

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// wantCode fails unless err is of kind and carries code.

func TestInUse(t *testing.T) {
	wantCode(t, "", InUse(Project, ReferenceMissing(Project, errors.New("fk"))), errdefs.ErrFailedPrecondition, "project_in_use")
	other := errdefs.Unavailable("store_busy", "busy")
	if got := InUse(Project, other); got != other {
		t.Fatalf("InUse changed an error of another kind: %v", got)
	}
	if InUse(Project, nil) != nil {
		t.Fatal("InUse(nil) is not nil")
	}
}

func TestMemberExists(t *testing.T) {
	wantCode(t, "", WorkspaceMemberExists(Exists(Member, errors.New("unique"))), errdefs.ErrConflict, "member_exists")
	if WorkspaceMemberExists(nil) != nil {
		t.Fatal("WorkspaceMemberExists(nil) is not nil")
	}
}

func TestCheckMemberLimit(t *testing.T) {
	wantCode(t, "", CheckMemberLimit(-1), errdefs.ErrInvalidArgument, "invalid_member_limit")
	for _, n := range []int{0, 1, 500} {
		if err := CheckMemberLimit(n); err != nil {
			t.Fatalf("CheckMemberLimit(%d): %v", n, err)
		}
	}
}

func TestHostsRoundTrip(t *testing.T) {
	for _, in := range [][]string{nil, {}, {"a.example", "b.example"}} {
		v, err := EncodeHosts(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeHosts(v)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || !slices.Equal(got, in) {
			t.Fatalf("hosts %#v stored as %s read back as %#v; want a list equal to it", in, v, got)
		}
	}
	if _, err := DecodeHosts("{"); err == nil {
		t.Fatal("DecodeHosts of no JSON array gave no error")
	}
}

func TestEgressLimit(t *testing.T) {
	for in, want := range map[int]int{-1: store.MaxLimit, 0: store.MaxLimit, 1: 1, store.MaxLimit: store.MaxLimit, store.MaxLimit + 1: store.MaxLimit} {
		if got := EgressLimit(in); got != want {
			t.Fatalf("EgressLimit(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestWarmTimes(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later := at.Add(time.Minute)
	now := func() time.Time { return later }
	for _, c := range []struct {
		w                store.WarmSandbox
		created, updated time.Time
	}{
		{store.WarmSandbox{}, later, later},
		{store.WarmSandbox{CreatedAt: at}, at, at},
		{store.WarmSandbox{CreatedAt: at, UpdatedAt: later}, at, later},
	} {
		created, updated := WarmTimes(c.w, now)
		if !created.Equal(c.created) || !updated.Equal(c.updated) {
			t.Fatalf("WarmTimes(%v, %v) = %v, %v; want %v, %v", c.w.CreatedAt, c.w.UpdatedAt, created, updated, c.created, c.updated)
		}
	}
}

func TestCheckAcquire(t *testing.T) {
	wantCode(t, "", CheckAcquire("", "h", time.Second), errdefs.ErrInvalidArgument, "invalid_lease")
	wantCode(t, "", CheckAcquire("n", "", time.Second), errdefs.ErrInvalidArgument, "invalid_lease")
	wantCode(t, "", CheckAcquire("n", "h", 0), errdefs.ErrInvalidArgument, "invalid_lease")
	if err := CheckAcquire("n", "h", time.Second); err != nil {
		t.Fatal(err)
	}
}
