package ledger_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.WithPostgres(m))
}

func newClock() *testenv.Clock { return testenv.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)) }

// testPricing: one core costs 1000 micro-credits a second (memory is
// free), and a minute is prepaid: a 1-core start holds 0.06 credits.
var testPricing = ledger.Pricing{
	Default:    ledger.Rate{CPUMicros: 1000},
	FirstSlice: time.Minute,
}

const slice = 60_000 // what testPricing's first slice of one core costs

// hooked is the fake provider with a hook a test may set, called as
// Create begins.
type hooked struct {
	*fake.Provider
	beforeCreate func()
}

func (p *hooked) Create(ctx context.Context, spec provider.Spec) (provider.Handle, error) {
	if p.beforeCreate != nil {
		p.beforeCreate()
	}
	return p.Provider.Create(ctx, spec)
}

// harness is a runtime service billed by a ledger, on a real SQLite store
// and the fake provider, with org acme and workspace dev.
type harness struct {
	t      *testing.T
	ctx    context.Context
	st     store.Store
	fake   *fake.Provider
	hooked *hooked // the provider the service uses: the fake, with a hook
	clock  *testenv.Clock
	rts    *runtime.Service
	l      *ledger.Ledger
	org    store.Org
	ws     store.Workspace
}

func newHarness(t *testing.T, p ledger.Pricing) *harness {
	t.Helper()
	clock := newClock()
	return newHarnessAt(t, p, clock, clock.Now)
}

// newHarnessAt is newHarness with the services' clock now; clock is what
// h.clock is (a test in a synctest bubble passes time.Now and moves it
// with time.Sleep).
func newHarnessAt(t *testing.T, p ledger.Pricing, clock *testenv.Clock, now func() time.Time) *harness {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h := &harness{t: t, ctx: ctx, st: st, clock: clock}
	h.fake = fake.New(fake.Config{Now: now})
	h.hooked = &hooked{Provider: h.fake}
	reg := provider.NewRegistry()
	reg.Register(h.hooked)
	meter := ledger.NewMeter(p)
	logger := slog.New(slog.DiscardHandler)
	h.rts = runtime.New(runtime.Config{
		Store: st, Providers: reg, Instance: "test", Now: now, Logger: logger, Billing: meter,
	})
	h.l = ledger.New(ledger.Config{Store: st, Meter: meter, Runtimes: h.rts, Now: now, Logger: logger})
	h.org = store.Org{ID: uuid.NewString(), Name: "acme"}
	h.must(st.CreateOrg(ctx, h.org))
	h.ws = store.Workspace{ID: uuid.NewString(), OrgID: h.org.ID, Name: "dev"}
	h.must(st.CreateWorkspace(ctx, h.ws))
	return h
}

func (h *harness) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatalf("unexpected error: %v", err)
	}
}

// runtime creates a project with a one-core runtime and returns the
// runtime.
func (h *harness) runtime(name string) store.Runtime {
	h.t.Helper()
	_, rt, err := h.rts.CreateProject(h.ctx, h.ws, name, "", runtime.ConfigRequest{CPUMillis: 1000, MemoryMB: 256})
	h.must(err)
	return rt
}

func (h *harness) grant(amount int64) {
	h.t.Helper()
	_, _, err := h.l.Grant(h.ctx, ledger.Movement{OrgID: h.org.ID, AmountMicros: amount, IdempotencyKey: uuid.NewString()})
	h.must(err)
}

// account fails the test unless the org's balance and held credits are as
// given.
func (h *harness) account(balance, held int64) {
	h.t.Helper()
	a, err := h.l.Account(h.ctx, h.org.ID)
	h.must(err)
	if a.BalanceMicros != balance || a.HeldMicros != held {
		h.t.Fatalf("account: balance %d held %d, want balance %d held %d", a.BalanceMicros, a.HeldMicros, balance, held)
	}
}

func (h *harness) sandbox(id string) store.Sandbox {
	h.t.Helper()
	sb, err := h.st.GetSandbox(h.ctx, id)
	h.must(err)
	return sb
}

func (h *harness) get(id string) store.Runtime {
	h.t.Helper()
	rt, err := h.st.GetRuntime(h.ctx, id)
	h.must(err)
	return rt
}

// kinds lists the journal's entry kinds, oldest first.
func (h *harness) kinds() []store.EntryKind {
	h.t.Helper()
	es, _, err := h.l.Journal(h.ctx, store.JournalFilter{OrgID: h.org.ID}, store.Page{Limit: store.MaxLimit})
	h.must(err)
	out := make([]store.EntryKind, len(es))
	for i, e := range es {
		out[len(es)-1-i] = e.Kind
	}
	return out
}

func (h *harness) tick() ledger.TickResult {
	h.t.Helper()
	res, err := h.l.Tick(h.ctx)
	h.must(err)
	return res
}

// wantCode fails the test unless err is a payment-required error with code.
func wantCode(t *testing.T, err error, kind error, code string) {
	t.Helper()
	pe, ok := errdefs.Public(err)
	if !errors.Is(err, kind) || !ok || pe.Code != code {
		t.Fatalf("error = %v, want kind %v with code %s", err, kind, code)
	}
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}
