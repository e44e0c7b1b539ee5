package storetest

import (
	"errors"
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

	t.Run("zero times read back as zero", func(t *testing.T) { testSandboxZeroTimes(t, f, o) })
	t.Run("get by provider id", func(t *testing.T) { testSandboxByProviderID(t, f, o, other) })
	t.Run("get by provider id prefix", func(t *testing.T) { testSandboxByProviderIDPrefix(t, f, o, other) })

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

// testSandboxByProviderID looks up a sandbox of o by its provider id.
func testSandboxByProviderID(t *testing.T, f *fixture, o, other store.Org) {
	s, ctx := f.s, f.ctx
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
}

// testSandboxByProviderIDPrefix looks up sandboxes of o by a prefix of
// their provider ids, long enough or not, unique or not.
func testSandboxByProviderIDPrefix(t *testing.T, f *fixture, o, other store.Org) {
	s, ctx := f.s, f.ctx
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
}

// testSandboxZeroTimes reads back a sandbox of o with no times set.
func testSandboxZeroTimes(t *testing.T, f *fixture, o store.Org) {
	s, ctx := f.s, f.ctx
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
}

func testSandboxVerbs(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)

	t.Run("a start, a pause, a resume and a kill each write their own columns", func(t *testing.T) { testSandboxTransitions(t, f, o) })

	t.Run("a kill without detail keeps the row's error", func(t *testing.T) {
		sb := f.sandbox(o, func(x *store.Sandbox) { x.Error = "earlier failure"; x.ExpiresAt = base })
		got, err := s.KillSandbox(ctx, sb.ID, 1, "deleted", "", f.next())
		must(t, err)
		if got.Error != "earlier failure" || got.KillReason != "deleted" || !got.ExpiresAt.IsZero() {
			t.Fatalf("killed row = error %q reason %q expires %v", got.Error, got.KillReason, got.ExpiresAt)
		}
	})

	t.Run("verbs never touch the billing columns", func(t *testing.T) { testVerbsKeepBill(t, f, w) })

	t.Run("a settlement does not make a transition stale", func(t *testing.T) {
		f.post(o, store.EntryGrant, 1_000_000)
		t0 := f.next()
		sb := f.runningSandbox(w, t0)
		_, err := s.Settle(ctx, store.Settlement{OrgID: o.ID, SandboxID: sb.ID, From: t0, UpTo: t0.Add(time.Second), AmountMicros: 100, IdempotencyKey: "verbs-" + sb.ID})
		must(t, err)
		got, err := s.MarkSandboxPaused(ctx, sb.ID, sb.Version, store.PauseUser, t0.Add(time.Second))
		must(t, err)
		if got.BilledMicros != 100 || got.BillingVersion != 2 || got.Version != 2 {
			t.Fatalf("row = billed %d billing version %d version %d; want the settlement kept and the pause written", got.BilledMicros, got.BillingVersion, got.Version)
		}
	})

	t.Run("expiry moves only later, only while running, without a version", func(t *testing.T) { testExtendSandboxExpiry(t, f, o) })
	t.Run("a kill and an expiry extension at once", func(t *testing.T) { testKillRacesExtension(t, f, o) })

	errs := []struct {
		name    string
		id      func(store.Sandbox) string
		version int64
		wantErr error
	}{
		{"stale version", func(x store.Sandbox) string { return x.ID }, 0, errdefs.ErrConflict},
		{"future version", func(x store.Sandbox) string { return x.ID }, 2, errdefs.ErrConflict},
		{"missing sandbox", func(store.Sandbox) string { return uuid.NewString() }, 1, errdefs.ErrNotFound},
		{"missing id", func(store.Sandbox) string { return "" }, 1, errdefs.ErrInvalidArgument},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			sb := f.sandbox(o, nil)
			id := tc.id(sb)
			for verb, run := range map[string]func() error{
				"RecordSandboxProvider": func() error { _, err := s.RecordSandboxProvider(ctx, id, tc.version, "x", nil, base); return err },
				"MarkSandboxRunning":    func() error { _, err := s.MarkSandboxRunning(ctx, id, tc.version, base, base); return err },
				"MarkSandboxPaused":     func() error { _, err := s.MarkSandboxPaused(ctx, id, tc.version, store.PauseUser, base); return err },
				"KillSandbox":           func() error { _, err := s.KillSandbox(ctx, id, tc.version, "deleted", "", base); return err },
			} {
				if err := run(); !errors.Is(err, tc.wantErr) {
					t.Errorf("%s: err = %v, want %v", verb, err, tc.wantErr)
				}
			}
			stored, err := s.GetSandbox(ctx, sb.ID)
			must(t, err)
			sb.BillingVersion = 1
			equal(t, "sandbox after failed verbs", stored, normSandbox(sb))
		})
	}
}

// testSandboxTransitions starts, pauses, resumes and kills a sandbox of o
// and checks the columns each verb writes.
func testSandboxTransitions(t *testing.T, f *fixture, o store.Org) {
	s, ctx := f.s, f.ctx
	sb := f.sandbox(o, func(x *store.Sandbox) { x.BilledMicros = 42; x.LastSettledAt = base })
	t0, t1, t2, t3 := f.next(), f.next(), f.next(), f.next()

	got, err := s.RecordSandboxProvider(ctx, sb.ID, 1, "c0ffee", []byte{1, 0, 2}, t0)
	must(t, err)
	want := normSandbox(sb)
	want.ProviderSandboxID, want.ProviderState, want.Version, want.UpdatedAt = "c0ffee", []byte{1, 0, 2}, 2, ts(t0)
	want.BillingVersion = 1
	equal(t, "after RecordSandboxProvider", got, want)

	got, err = s.MarkSandboxRunning(ctx, sb.ID, 2, t1, t1.Add(time.Hour))
	must(t, err)
	want.State, want.StartedAt, want.RunningSince, want.ExpiresAt = store.SandboxRunning, ts(t1), ts(t1), ts(t1.Add(time.Hour))
	want.Version, want.UpdatedAt = 3, ts(t1)
	equal(t, "after MarkSandboxRunning", got, want)

	got, err = s.MarkSandboxPaused(ctx, sb.ID, 3, store.PauseTimeout, t2)
	must(t, err)
	want.State, want.PauseReason, want.PausedAt, want.Version, want.UpdatedAt = store.SandboxPaused, store.PauseTimeout, ts(t2), 4, ts(t2)
	equal(t, "after MarkSandboxPaused", got, want)

	// A resume keeps the first start and clears the pause.
	got, err = s.MarkSandboxRunning(ctx, sb.ID, 4, t3, time.Time{})
	must(t, err)
	want.State, want.PauseReason, want.PausedAt, want.RunningSince, want.ExpiresAt = store.SandboxRunning, store.PauseNone, time.Time{}, ts(t3), time.Time{}
	want.Version, want.UpdatedAt = 5, ts(t3)
	equal(t, "after the resume", got, want)

	got, err = s.KillSandbox(ctx, sb.ID, 5, "provision_failed", "the image is gone", t3)
	must(t, err)
	want.State, want.KillReason, want.Error, want.KilledAt, want.Version = store.SandboxKilled, "provision_failed", "the image is gone", ts(t3), 6
	equal(t, "after KillSandbox", got, want)
	stored, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	equal(t, "stored sandbox", stored, got)
}

// testExtendSandboxExpiry moves the expiry of o's sandboxes.
func testExtendSandboxExpiry(t *testing.T, f *fixture, o store.Org) {
	s, ctx := f.s, f.ctx
	t0 := f.next()
	sb := f.sandbox(o, func(x *store.Sandbox) { x.State, x.ExpiresAt = store.SandboxRunning, t0 })
	moved, err := s.ExtendSandboxExpiry(ctx, sb.ID, t0.Add(-time.Minute))
	must(t, err)
	if moved {
		t.Fatal("an earlier expiry was written")
	}
	moved, err = s.ExtendSandboxExpiry(ctx, sb.ID, t0.Add(time.Minute))
	must(t, err)
	got, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	if !moved || !got.ExpiresAt.Equal(ts(t0.Add(time.Minute))) || got.Version != 1 {
		t.Fatalf("moved %v; row expires %v version %d; want it later and the version kept", moved, got.ExpiresAt, got.Version)
	}
	paused := f.sandbox(o, func(x *store.Sandbox) { x.State, x.ExpiresAt = store.SandboxPaused, t0 })
	if moved, err := s.ExtendSandboxExpiry(ctx, paused.ID, t0.Add(time.Hour)); err != nil || moved {
		t.Fatalf("a paused row's expiry moved (%v, %v)", moved, err)
	}
	never := f.sandbox(o, func(x *store.Sandbox) { x.State = store.SandboxRunning })
	if moved, err := s.ExtendSandboxExpiry(ctx, never.ID, t0.Add(time.Hour)); err != nil || moved {
		t.Fatalf("a row that never expires got an expiry (%v, %v)", moved, err)
	}
}

// testVerbsKeepBill pauses, resumes and kills a billed sandbox of w and
// checks that no verb touches the billing columns.
func testVerbsKeepBill(t *testing.T, f *fixture, w store.Workspace) {
	s, ctx := f.s, f.ctx
	// billed returns a running row with a bill and a watermark, which no
	// verb may touch.
	billed := func() store.Sandbox {
		sb := f.runningSandbox(w, f.next())
		sb.State = store.SandboxStarting
		return sb
	}
	sameBill := func(t *testing.T, got, was store.Sandbox) {
		t.Helper()
		if got.BilledMicros != was.BilledMicros || !got.LastSettledAt.Equal(ts(was.LastSettledAt)) || got.BillingVersion != 1 {
			t.Fatalf("billing columns moved: billed %d settled %v billing version %d; want %d %v 1",
				got.BilledMicros, got.LastSettledAt, got.BillingVersion, was.BilledMicros, ts(was.LastSettledAt))
		}
	}
	sb := billed()
	got, err := s.MarkSandboxPaused(ctx, sb.ID, sb.Version, store.PauseUser, f.next())
	must(t, err)
	sameBill(t, got, sb)
	got, err = s.MarkSandboxRunning(ctx, sb.ID, got.Version, f.next(), time.Time{})
	must(t, err)
	sameBill(t, got, sb)
	got, err = s.KillSandbox(ctx, sb.ID, got.Version, "reset", "", f.next())
	must(t, err)
	sameBill(t, got, sb)
}

// listingSandboxes stores the rows testSandboxListing lists: six of o,
// oldest first, with a mix of kinds, states, providers, runtimes (rt1,
// rt2) and workspaces (ws1, ws2), and the same six of other as noise. It
// returns o's, oldest and newest first.
func (f *fixture) listingSandboxes(o, other store.Org, rt1, rt2, ws1, ws2 string) (all, newest []store.Sandbox) {
	// Rows 3 and 4 share a creation time.
	type row struct {
		kind      store.SandboxKind
		state     store.SandboxState
		provider  string
		runtime   string
		workspace string
	}
	rows := []row{
		{store.KindRuntime, store.SandboxKilled, "docker", rt1, ws1},
		{store.KindRuntime, store.SandboxRunning, "docker", rt1, ws1},
		{store.KindTask, store.SandboxRunning, "fake", "", ""},
		{store.KindWorld, store.SandboxPaused, "docker", "", ws2},
		{store.KindRuntime, store.SandboxRunning, "fake", rt2, ws2},
		{store.KindTask, store.SandboxKilled, "docker", "", ws1},
	}
	var tie time.Time
	for i, r := range rows {
		sb := f.sandbox(o, func(x *store.Sandbox) {
			x.Kind, x.State, x.Provider, x.RuntimeID, x.WorkspaceID = r.kind, r.state, r.provider, r.runtime, r.workspace
			if i == 3 {
				tie = x.CreatedAt
			}
			if i == 4 {
				x.CreatedAt, x.UpdatedAt = tie, tie
			}
		})
		all = append(all, sb)
		f.sandbox(other, func(x *store.Sandbox) { // noise in another org
			x.Kind, x.State, x.Provider, x.RuntimeID, x.WorkspaceID = r.kind, r.state, r.provider, r.runtime, r.workspace
		})
	}
	// Newest first: created_at descending, then id descending.
	newest = []store.Sandbox{all[5]}
	if all[3].ID > all[4].ID {
		newest = append(newest, all[3], all[4])
	} else {
		newest = append(newest, all[4], all[3])
	}
	newest = append(newest, all[2], all[1], all[0])
	return all, newest
}

func testSandboxListing(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o, other := f.org(), f.org()
	rt1, rt2 := uuid.NewString(), uuid.NewString()
	ws1, ws2 := uuid.NewString(), uuid.NewString()

	all, newest := f.listingSandboxes(o, other, rt1, rt2, ws1, ws2)
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
		{"one workspace", store.SandboxFilter{OrgID: o.ID, Workspaces: []string{ws1}},
			pick(func(x store.Sandbox) bool { return x.WorkspaceID == ws1 })},
		{"two workspaces", store.SandboxFilter{OrgID: o.ID, Workspaces: []string{ws2, ws1}},
			pick(func(x store.Sandbox) bool { return x.WorkspaceID != "" })},
		{"workspace and state", store.SandboxFilter{OrgID: o.ID, Workspaces: []string{ws2}, State: store.SandboxRunning},
			[]string{all[4].ID}},
		{"unknown workspace", store.SandboxFilter{OrgID: o.ID, Workspaces: []string{uuid.NewString()}}, nil},
		{"no workspaces", store.SandboxFilter{OrgID: o.ID, Workspaces: []string{}}, nil},
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

	t.Run("pages", func(t *testing.T) { testSandboxPages(t, f, o, ws1, newest, pick) })

	t.Run("org is required", func(t *testing.T) {
		_, _, err := s.ListSandboxes(ctx, store.SandboxFilter{Kind: store.KindTask}, store.Page{})
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})
	t.Run("counts of live rows", func(t *testing.T) { testCountSandboxes(t, f, o) })
}

// testSandboxPages pages through o's sandboxes, all (newest) and
// filtered, which pick chooses from newest.
func testSandboxPages(t *testing.T, f *fixture, o store.Org, ws1 string, newest []store.Sandbox, pick func(keep func(store.Sandbox) bool) []string) {
	s, ctx := f.s, f.ctx
	sid := func(sb store.Sandbox) string { return sb.ID }
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
	got = collectPages(t, func(p store.Page) ([]store.Sandbox, string, error) {
		return s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID, Workspaces: []string{ws1}}, p)
	}, 1)
	equal(t, "paged ids of a workspace", ids(got, sid), pick(func(x store.Sandbox) bool { return x.WorkspaceID == ws1 }))
	first, _, err := s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID}, store.Page{Limit: 2})
	must(t, err)
	equal(t, "first page rows", normSandbox(first[0]), normSandbox(newest[0]))
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
