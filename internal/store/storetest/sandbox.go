package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// fullSandbox sets every field of s.
func fullSandbox(s *store.Sandbox) {
	s.WorkspaceID = uuid.NewString()
	s.ProjectID = uuid.NewString()
	s.RuntimeID = uuid.NewString()
	s.Kind = store.KindRuntime
	s.State = store.SandboxPaused
	s.PauseReason = store.PauseInsufficientCredits
	s.Provider = "docker"
	s.ProviderSandboxID = "c0ffee" + uuid.NewString()[:8]
	s.ProviderState = []byte{0, 1, 2, 0xff, '{', 0}
	s.Image = "paddock/base:1"
	s.Network = "proxy"
	s.CPUMillis = 2000
	s.MemoryMB = 4096
	s.SecretIDs = []string{uuid.NewString(), uuid.NewString()}
	s.KillReason = "none yet"
	s.Error = "a detail"
	s.BilledMicros = 1_234_567_890_123
	s.StartedAt = s.CreatedAt.Add(time.Second + 999*time.Nanosecond)
	s.PausedAt = s.CreatedAt.Add(time.Minute)
	s.KilledAt = s.CreatedAt.Add(time.Hour)
	s.ExpiresAt = s.CreatedAt.Add(2 * time.Hour)
	s.LastSettledAt = s.CreatedAt.Add(3 * time.Minute)
	s.RunningSince = s.CreatedAt.Add(2 * time.Minute)
	s.UpdatedAt = s.CreatedAt.Add(4 * time.Minute)
}

func testSandboxes(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o, other := f.org(), f.org()

	roundTrips := []struct {
		name string
		edit func(*store.Sandbox)
	}{
		{"minimal", nil},
		{"every field", fullSandbox},
		{"nil secret ids", func(x *store.Sandbox) { x.SecretIDs = nil }},
		{"empty secret ids", func(x *store.Sandbox) { x.SecretIDs = []string{} }},
		{"empty provider state", func(x *store.Sandbox) { x.ProviderState = []byte{} }},
		{"large provider state", func(x *store.Sandbox) {
			x.ProviderState = make([]byte, 64<<10)
			for i := range x.ProviderState {
				x.ProviderState[i] = byte(i * 7)
			}
		}},
		{"version is set by the store", func(x *store.Sandbox) { x.Version = 9 }},
	}
	for _, tc := range roundTrips {
		t.Run("round trip "+tc.name, func(t *testing.T) {
			want := f.sandbox(o, tc.edit)
			got, err := s.GetSandbox(ctx, want.ID)
			must(t, err)
			equal(t, "GetSandbox", got, normSandbox(want))
		})
	}

	t.Run("zero times read back as zero", func(t *testing.T) {
		want := f.sandbox(o, nil)
		got, err := s.GetSandbox(ctx, want.ID)
		must(t, err)
		for name, v := range map[string]time.Time{
			"StartedAt": got.StartedAt, "PausedAt": got.PausedAt, "KilledAt": got.KilledAt,
			"ExpiresAt": got.ExpiresAt, "LastSettledAt": got.LastSettledAt,
		} {
			if !v.IsZero() {
				t.Errorf("%s = %v, want the zero time", name, v)
			}
		}
	})

	t.Run("get by provider id", func(t *testing.T) {
		want := f.sandbox(o, fullSandbox)
		got, err := s.GetSandboxByProviderID(ctx, o.ID, want.ProviderSandboxID)
		must(t, err)
		equal(t, "GetSandboxByProviderID", got, normSandbox(want))
		_, err = s.GetSandboxByProviderID(ctx, other.ID, want.ProviderSandboxID)
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetSandboxByProviderID(ctx, o.ID, "no-such-container")
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetSandboxByProviderID(ctx, o.ID, "")
		wantKind(t, err, errdefs.ErrNotFound)
	})

	t.Run("get by provider id prefix", func(t *testing.T) {
		stem := "feed" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
		a := f.sandbox(o, func(sb *store.Sandbox) { sb.ProviderSandboxID = stem + "aaaa" + strings.Repeat("0", 40) })
		b := f.sandbox(o, func(sb *store.Sandbox) { sb.ProviderSandboxID = stem + "bbbb" + strings.Repeat("0", 40) })
		got, err := s.GetSandboxByProviderID(ctx, o.ID, stem+"aa")
		must(t, err)
		equal(t, "by prefix", got.ID, a.ID)
		got, err = s.GetSandboxByProviderID(ctx, o.ID, stem+"bbbb0")
		must(t, err)
		equal(t, "by prefix", got.ID, b.ID)
		_, err = s.GetSandboxByProviderID(ctx, o.ID, stem)
		wantKind(t, err, errdefs.ErrConflict)
		_, err = s.GetSandboxByProviderID(ctx, o.ID, stem[:store.MinProviderIDPrefix-1])
		wantKind(t, err, errdefs.ErrNotFound)
		_, err = s.GetSandboxByProviderID(ctx, other.ID, stem+"aa")
		wantKind(t, err, errdefs.ErrNotFound)
	})

	t.Run("not found", func(t *testing.T) {
		_, err := s.GetSandbox(ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
	})

	dup := f.sandbox(o, nil)
	creates := []struct {
		name    string
		edit    func(*store.Sandbox)
		wantErr error
	}{
		{"duplicate id", func(x *store.Sandbox) { x.ID = dup.ID }, errdefs.ErrConflict},
		{"unknown org", func(x *store.Sandbox) { x.OrgID = uuid.NewString() }, errdefs.ErrFailedPrecondition},
		{"missing id", func(x *store.Sandbox) { x.ID = "" }, errdefs.ErrInvalidArgument},
		{"missing org", func(x *store.Sandbox) { x.OrgID = "" }, errdefs.ErrInvalidArgument},
		{"missing kind", func(x *store.Sandbox) { x.Kind = "" }, errdefs.ErrInvalidArgument},
		{"missing state", func(x *store.Sandbox) { x.State = "" }, errdefs.ErrInvalidArgument},
		{"rows outlive runtimes: unknown runtime and project", func(x *store.Sandbox) {
			x.RuntimeID, x.ProjectID, x.WorkspaceID = uuid.NewString(), uuid.NewString(), uuid.NewString()
		}, nil},
		{"zero times", func(x *store.Sandbox) { x.CreatedAt, x.UpdatedAt = time.Time{}, time.Time{} }, nil},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			x := f.sandboxFor(o)
			tc.edit(&x)
			wantKind(t, s.CreateSandbox(ctx, x), tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			got, err := s.GetSandbox(ctx, x.ID)
			must(t, err)
			if got.Version != 1 || got.CreatedAt.IsZero() || got.UpdatedAt.IsZero() {
				t.Fatalf("got %+v; want version 1 and both times set", got)
			}
		})
	}
}

func testSandboxUpdates(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()

	t.Run("writes every field and bumps the version", func(t *testing.T) {
		sb := f.sandbox(o, nil)
		u := sb
		fullSandbox(&u)
		got, err := s.UpdateSandbox(ctx, u)
		must(t, err)
		want := u
		want.Version = 2
		equal(t, "UpdateSandbox result", got, normSandbox(want))
		stored, err := s.GetSandbox(ctx, sb.ID)
		must(t, err)
		equal(t, "stored sandbox", stored, got)

		// Clearing fields: zero times, nil state and secrets read back zero.
		c := got
		c.State = store.SandboxRunning
		c.PauseReason = store.PauseNone
		c.ProviderState = nil
		c.SecretIDs = nil
		c.PausedAt, c.KilledAt = time.Time{}, time.Time{}
		got, err = s.UpdateSandbox(ctx, c)
		must(t, err)
		want = c
		want.Version = 3
		equal(t, "cleared sandbox", got, normSandbox(want))
	})

	t.Run("id, org and creation time are not rewritten", func(t *testing.T) {
		sb := f.sandbox(o, nil)
		u := sb
		u.OrgID = f.org().ID
		u.CreatedAt = base.Add(-time.Hour)
		got, err := s.UpdateSandbox(ctx, u)
		must(t, err)
		if got.OrgID != sb.OrgID || !got.CreatedAt.Equal(ts(sb.CreatedAt)) {
			t.Fatalf("identity changed: got %+v, created %+v", got, sb)
		}
	})

	errs := []struct {
		name    string
		edit    func(*store.Sandbox)
		wantErr error
	}{
		{"stale version", func(x *store.Sandbox) { x.Version = 0 }, errdefs.ErrConflict},
		{"future version", func(x *store.Sandbox) { x.Version = 2 }, errdefs.ErrConflict},
		{"missing sandbox", func(x *store.Sandbox) { x.ID = uuid.NewString() }, errdefs.ErrNotFound},
		{"missing id", func(x *store.Sandbox) { x.ID = "" }, errdefs.ErrInvalidArgument},
		{"missing state", func(x *store.Sandbox) { x.State = "" }, errdefs.ErrInvalidArgument},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			sb := f.sandbox(o, nil)
			x := sb
			x.State = store.SandboxKilled
			tc.edit(&x)
			_, err := s.UpdateSandbox(ctx, x)
			wantKind(t, err, tc.wantErr)
			stored, err := s.GetSandbox(ctx, sb.ID)
			must(t, err)
			equal(t, "sandbox after a failed update", stored, normSandbox(sb))
		})
	}
}

func testSandboxListing(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o, other := f.org(), f.org()
	rt1, rt2 := uuid.NewString(), uuid.NewString()

	// Rows of o, oldest first, with a mix of kinds, states, providers and
	// runtimes. Rows 3 and 4 share a creation time.
	type row struct {
		kind     store.SandboxKind
		state    store.SandboxState
		provider string
		runtime  string
	}
	rows := []row{
		{store.KindRuntime, store.SandboxKilled, "docker", rt1},
		{store.KindRuntime, store.SandboxRunning, "docker", rt1},
		{store.KindTask, store.SandboxRunning, "fake", ""},
		{store.KindWorld, store.SandboxPaused, "docker", ""},
		{store.KindRuntime, store.SandboxRunning, "fake", rt2},
		{store.KindTask, store.SandboxKilled, "docker", ""},
	}
	var all []store.Sandbox
	var tie time.Time
	for i, r := range rows {
		sb := f.sandbox(o, func(x *store.Sandbox) {
			x.Kind, x.State, x.Provider, x.RuntimeID = r.kind, r.state, r.provider, r.runtime
			if i == 3 {
				tie = x.CreatedAt
			}
			if i == 4 {
				x.CreatedAt, x.UpdatedAt = tie, tie
			}
		})
		all = append(all, sb)
		f.sandbox(other, func(x *store.Sandbox) { // noise in another org
			x.Kind, x.State, x.Provider, x.RuntimeID = r.kind, r.state, r.provider, r.runtime
		})
	}
	// Newest first: created_at descending, then id descending.
	newest := []store.Sandbox{all[5]}
	if all[3].ID > all[4].ID {
		newest = append(newest, all[3], all[4])
	} else {
		newest = append(newest, all[4], all[3])
	}
	newest = append(newest, all[2], all[1], all[0])
	pick := func(keep func(store.Sandbox) bool) []string {
		var out []string
		for _, sb := range newest {
			if keep(sb) {
				out = append(out, sb.ID)
			}
		}
		return out
	}
	sid := func(sb store.Sandbox) string { return sb.ID }

	cases := []struct {
		name   string
		filter store.SandboxFilter
		want   []string
	}{
		{"org only", store.SandboxFilter{OrgID: o.ID}, pick(func(store.Sandbox) bool { return true })},
		{"kind", store.SandboxFilter{OrgID: o.ID, Kind: store.KindRuntime},
			pick(func(x store.Sandbox) bool { return x.Kind == store.KindRuntime })},
		{"state", store.SandboxFilter{OrgID: o.ID, State: store.SandboxRunning},
			pick(func(x store.Sandbox) bool { return x.State == store.SandboxRunning })},
		{"provider", store.SandboxFilter{OrgID: o.ID, Provider: "fake"},
			pick(func(x store.Sandbox) bool { return x.Provider == "fake" })},
		{"runtime", store.SandboxFilter{OrgID: o.ID, RuntimeID: rt1},
			pick(func(x store.Sandbox) bool { return x.RuntimeID == rt1 })},
		{"kind and state and provider", store.SandboxFilter{OrgID: o.ID, Kind: store.KindTask, State: store.SandboxKilled, Provider: "docker"},
			[]string{all[5].ID}},
		{"no match", store.SandboxFilter{OrgID: o.ID, Kind: store.KindWorld, State: store.SandboxRunning}, nil},
		{"unknown org", store.SandboxFilter{OrgID: uuid.NewString()}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, next, err := s.ListSandboxes(ctx, tc.filter, store.Page{})
			must(t, err)
			if len(got) != 0 || len(tc.want) != 0 {
				equal(t, "sandbox ids", ids(got, sid), tc.want)
			}
			equal(t, "next cursor", next, "")
		})
	}

	t.Run("pages", func(t *testing.T) {
		for limit := 1; limit <= len(newest)+1; limit++ {
			got := collectPages(t, func(p store.Page) ([]store.Sandbox, string, error) {
				return s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID}, p)
			}, limit)
			equal(t, "paged sandbox ids", ids(got, sid), ids(newest, sid))
		}
		got := collectPages(t, func(p store.Page) ([]store.Sandbox, string, error) {
			return s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID, State: store.SandboxRunning}, p)
		}, 1)
		equal(t, "paged filtered ids", ids(got, sid), pick(func(x store.Sandbox) bool { return x.State == store.SandboxRunning }))
		first, _, err := s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID}, store.Page{Limit: 2})
		must(t, err)
		equal(t, "first page rows", normSandbox(first[0]), normSandbox(newest[0]))
	})

	t.Run("org is required", func(t *testing.T) {
		_, _, err := s.ListSandboxes(ctx, store.SandboxFilter{Kind: store.KindTask}, store.Page{})
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})
}

// collectPages walks a listing with limit and returns every row in order.
// It fails if a page is larger than limit, if a page other than the last is
// short, or if the walk does not end.
func collectPages[T any](t *testing.T, list func(store.Page) ([]T, string, error), limit int) []T {
	t.Helper()
	var all []T
	cursor := ""
	for range 10_000 {
		got, next, err := list(store.Page{Cursor: cursor, Limit: limit})
		must(t, err)
		if len(got) > limit {
			t.Fatalf("page of %d rows with limit %d", len(got), limit)
		}
		all = append(all, got...)
		if next == "" {
			return all
		}
		if len(got) != limit {
			t.Fatalf("short page (%d of %d rows) with a next cursor", len(got), limit)
		}
		cursor = next
	}
	t.Fatalf("pagination did not end")
	return nil
}
