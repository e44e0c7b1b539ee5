package api_test

import (
	"context"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// billedEnv runs the API with one core at 0.001 credits a second and the
// first minute prepaid, on an injected clock, with org acme, workspace dev
// and project p1 (one core).
func billedEnv(t *testing.T) (*servertest.Env, *testenv.Clock, client.Project, string) {
	t.Helper()
	c := testenv.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	env := servertest.New(t, servertest.Options{
		Now:     c.Now,
		Pricing: &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute},
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{
		Name: "p1", Runtime: &client.RuntimeConfig{CPUMillis: 1000, MemoryMB: 256},
	}).Decode(t, &p)
	return env, c, p, "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
}

func wantError(t *testing.T, r servertest.Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.Code() != code {
		t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, status, code)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCreditsLifecycle(t *testing.T) {
	env, clock, p, rtPath := billedEnv(t)
	const credits = "/api/v1/org/acme/credits"

	var acct client.CreditAccount
	env.Must(t, 200, "GET", credits, nil).Decode(t, &acct)
	if acct.Balance != 0 || acct.Held != 0 || len(acct.Recent) != 0 || acct.Recent == nil {
		t.Fatalf("new account = %+v", acct)
	}

	// No credits: the start is refused with 402 and creates nothing.
	wantError(t, env.Do(t, "POST", rtPath+"/start", nil), 402, "insufficient_credits")
	var sbs client.List[client.Sandbox]
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes", nil).Decode(t, &sbs)
	if len(sbs.Items) != 0 {
		t.Fatalf("a refused start left %d rows", len(sbs.Items))
	}

	// A grant, retried, grants once.
	grant := client.GrantCreditsRequest{Amount: 1.5, IdempotencyKey: "invoice-1", Note: "march"}
	var first, again client.CreditEntry
	env.Must(t, 201, "POST", credits+"/grants", grant).Decode(t, &first)
	env.Must(t, 200, "POST", credits+"/grants", grant).Decode(t, &again)
	if first.ID != again.ID || first.Kind != client.EntryGrant || first.Amount != 1.5 || first.BalanceAfter != 1.5 || first.Actor == "" {
		t.Fatalf("grant = %+v, retry = %+v", first, again)
	}
	wantError(t, env.Do(t, "POST", credits+"/grants", client.GrantCreditsRequest{Amount: 2, IdempotencyKey: "invoice-1"}), 409, "idempotency_key_reused")

	// The start prepays the first minute.
	var rt client.Runtime
	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)
	var sb client.Sandbox
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID, nil).Decode(t, &sb)
	if !near(sb.BilledCredits, 0.06) || sb.RunningCredits != 0 || !near(sb.EstimatedTotalCredits, 0.06) {
		t.Fatalf("credits after start = %v/%v/%v", sb.BilledCredits, sb.RunningCredits, sb.EstimatedTotalCredits)
	}
	// Two minutes on, one minute runs up past the prepaid one.
	clock.Advance(2 * time.Minute)
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+sb.ID, nil).Decode(t, &sb)
	if !near(sb.BilledCredits, 0.06) || !near(sb.RunningCredits, 0.06) || !near(sb.EstimatedTotalCredits, 0.12) {
		t.Fatalf("credits after two minutes = %v/%v/%v", sb.BilledCredits, sb.RunningCredits, sb.EstimatedTotalCredits)
	}
	if _, err := env.Ledger.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+sb.ID, nil).Decode(t, &sb)
	if !near(sb.BilledCredits, 0.12) || sb.RunningCredits != 0 {
		t.Fatalf("credits after the tick = %v/%v", sb.BilledCredits, sb.RunningCredits)
	}
	env.Must(t, 200, "GET", credits, nil).Decode(t, &acct)
	if !near(acct.Balance, 1.38) || acct.Held != 0 || !near(acct.Available, 1.38) || len(acct.Recent) != 4 || acct.Recent[0].Kind != client.EntryDeduction {
		t.Fatalf("account = %+v", acct)
	}

	// The journal, filtered.
	var j client.List[client.CreditEntry]
	env.Must(t, 200, "GET", credits+"/journal?kind=deduction&sandbox_id="+sb.ID, nil).Decode(t, &j)
	if len(j.Items) != 2 || j.Items[0].SandboxID != sb.ID || j.Items[0].RuntimeID != p.RuntimeID || j.Items[0].PeriodEnd == nil {
		t.Fatalf("deductions = %+v", j.Items)
	}
	env.Must(t, 200, "GET", credits+"/journal?limit=1", nil).Decode(t, &j)
	if len(j.Items) != 1 || j.NextCursor == "" {
		t.Fatalf("first page = %+v", j)
	}
	env.Must(t, 200, "GET", credits+"/journal?runtime_id="+p.RuntimeID+"&project_id="+p.ID, nil).Decode(t, &j)
	if len(j.Items) != 3 { // hold, the first minute, the second
		t.Fatalf("runtime's entries = %+v", j.Items)
	}

	// Usage per runtime and per org.
	var u client.Usage
	env.Must(t, 200, "GET", "/api/v1/org/acme/usage?group_by=runtime", nil).Decode(t, &u)
	if len(u.Items) != 1 || u.Items[0].Key != p.RuntimeID || !near(u.Items[0].Net, 0.12) || !near(u.Total.Charged, 0.12) || u.GroupBy != "runtime" {
		t.Fatalf("usage = %+v", u)
	}
	from := url.QueryEscape(clock.Now().Add(-time.Hour).Format(time.RFC3339))
	to := url.QueryEscape(clock.Now().Add(time.Hour).Format(time.RFC3339))
	env.Must(t, 200, "GET", "/api/v1/org/acme/usage?from="+from+"&to="+to, nil).Decode(t, &u)
	if len(u.Items) != 1 || !near(u.Items[0].Charged, 0.12) || u.From == nil {
		t.Fatalf("org usage in range = %+v", u)
	}

	// The balance runs out: the settler pauses the runtime.
	env.Must(t, 201, "POST", credits+"/balance", client.SetBalanceRequest{Balance: 0.01, IdempotencyKey: "drain"})
	clock.Advance(time.Minute)
	if _, err := env.Ledger.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	rt = runtimeOf(t, env.Must(t, 200, "GET", rtPath, nil))
	if rt.Status != client.RuntimePaused || rt.PauseReason != client.PauseInsufficientCredits {
		t.Fatalf("runtime after running out = %+v", rt)
	}
	env.Must(t, 200, "GET", credits, nil).Decode(t, &acct)
	if acct.Balance != 0 {
		t.Fatalf("balance = %v, want 0", acct.Balance)
	}
	// Resume is refused until credits come; a grant resumes nothing.
	wantError(t, env.Do(t, "POST", rtPath+"/resume", nil), 402, "insufficient_credits")
	env.Must(t, 201, "POST", credits+"/grants", client.GrantCreditsRequest{Amount: 10, IdempotencyKey: "top-up"})
	env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
	if rt.Status != client.RuntimePaused {
		t.Fatalf("a grant resumed the runtime: %+v", rt)
	}
	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/resume", nil))
	if rt.Status != client.RuntimeRunning || rt.PauseReason != "" {
		t.Fatalf("resumed runtime = %+v", rt)
	}

	// Killing settles the final seconds: after 90s, 30 past the prepaid
	// minute.
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+sb.ID, nil).Decode(t, &sb)
	billed := sb.BilledCredits
	clock.Advance(90 * time.Second)
	var killed client.Sandbox
	env.Must(t, 200, "DELETE", "/api/v1/org/acme/sandboxes/"+sb.ID, nil).Decode(t, &killed)
	if killed.State != client.SandboxKilled || !near(killed.BilledCredits, billed+0.03) || killed.RunningCredits != 0 || killed.ExpiresAt != nil {
		t.Fatalf("killed row = %+v (billed before %v)", killed, billed)
	}
}

// TestUsageByDayAndHolds charges a runtime on either side of a UTC
// midnight and reads its usage per project and day, then lists the holds
// the meter left open.
func TestUsageByDayAndHolds(t *testing.T) {
	env, clock, p, rtPath := billedEnv(t)
	const credits = "/api/v1/org/acme/credits"
	env.Must(t, 201, "POST", credits+"/grants", client.GrantCreditsRequest{Amount: 1000, IdempotencyKey: "g"})
	var rt client.Runtime
	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)
	// The start's hold was captured by its first charge: none is open.
	var holds client.List[client.CreditEntry]
	env.Must(t, 200, "GET", credits+"/holds", nil).Decode(t, &holds)
	if len(holds.Items) != 0 {
		t.Fatalf("open holds after a start = %+v", holds.Items)
	}

	// From 09:00 to 00:30 the next day: the first minute was charged on
	// March 1, the settler charges the rest on March 2.
	clock.Advance(15*time.Hour + 30*time.Minute)
	if _, err := env.Ledger.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	var u client.Usage
	env.Must(t, 200, "GET", "/api/v1/org/acme/usage?group_by=project&interval=day", nil).Decode(t, &u)
	march1 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if u.Interval != "day" || len(u.Items) != 2 || !near(u.Total.Net, 0.001*(15*3600+30*60)) {
		t.Fatalf("usage by day = %+v", u)
	}
	for i, want := range []struct {
		day time.Time
		net float64
	}{{march1, 0.06}, {march1.AddDate(0, 0, 1), 0.001 * (15*3600 + 29*60)}} {
		it := u.Items[i]
		if it.Key != p.ID || it.Name != "p1" || it.Day == nil || !it.Day.Equal(want.day) || !near(it.Net, want.net) {
			t.Fatalf("item %d = %+v (day %v), want day %v net %v", i, it, it.Day, want.day, want.net)
		}
	}
	var total client.Usage
	env.Must(t, 200, "GET", "/api/v1/org/acme/usage?group_by=project", nil).Decode(t, &total)
	if total.Interval != "total" || len(total.Items) != 1 || total.Items[0].Day != nil {
		t.Fatalf("usage in total = %+v", total)
	}

	// A hold no charge or release closed (a start interrupted midway) is
	// listed, with what it holds.
	var o client.Org
	env.Must(t, 200, "GET", "/api/v1/org/acme", nil).Decode(t, &o)
	if _, err := env.Store.PostCredit(t.Context(), store.CreditPosting{OrgID: o.ID, Kind: store.EntryHold, AmountMicros: 60_000,
		SandboxID: rt.CurrentSandboxID, RuntimeID: rt.ID, IdempotencyKey: "hold:" + rt.CurrentSandboxID + ":interrupted"}); err != nil {
		t.Fatal(err)
	}
	env.Must(t, 200, "GET", credits+"/holds", nil).Decode(t, &holds)
	if len(holds.Items) != 1 || holds.Items[0].Kind != client.EntryHold || !near(holds.Items[0].HeldChange, 0.06) || holds.Items[0].SandboxID != rt.CurrentSandboxID {
		t.Fatalf("open holds = %+v", holds.Items)
	}
	// Holds are the org admins'.
	member, _, err := auth.Keys{Store: env.Store, Now: time.Now}.Create(context.Background(), store.APIKey{Name: "m", Role: string(auth.RoleMember), OrgID: o.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, env.DoKey(t, member, "GET", credits+"/holds", nil), 403, "role_too_low")
}

func TestNewOrgsStartWithCredits(t *testing.T) {
	env := servertest.New(t, servertest.Options{NewOrgMicros: 5_000_000})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	var acct client.CreditAccount
	env.Must(t, 200, "GET", "/api/v1/org/acme/credits", nil).Decode(t, &acct)
	if acct.Balance != 5 || len(acct.Recent) != 1 || acct.Recent[0].Kind != client.EntryGrant || acct.Recent[0].Note != "starting credits" {
		t.Fatalf("a new org's account = %+v", acct)
	}
	// A name clash grants nothing twice: the org and its credits are one
	// transaction.
	wantError(t, env.Do(t, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"}), 409, "org_exists")
	env.Must(t, 200, "GET", "/api/v1/org/acme/credits", nil).Decode(t, &acct)
	if acct.Balance != 5 {
		t.Fatalf("balance after a clash = %v", acct.Balance)
	}
}

func TestCreditsNeedAnAdmin(t *testing.T) {
	env, _, _, _ := billedEnv(t)
	var o client.Org
	env.Must(t, 200, "GET", "/api/v1/org/acme", nil).Decode(t, &o)
	orgKey, _, err := auth.Keys{Store: env.Store, Now: time.Now}.Create(context.Background(), store.APIKey{Name: "acme admin", Role: string(auth.RoleOwner), OrgID: o.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, body string }{
		{"/api/v1/org/acme/credits/grants", `{"amount": 5, "idempotency_key": "k"}`},
		{"/api/v1/org/acme/credits/balance", `{"balance": 5, "idempotency_key": "k"}`},
	} {
		wantError(t, env.DoKey(t, orgKey, "POST", tc.path, tc.body), 403, "installation_admin_only")
	}
	// Member limits are the org's billing setting: its owners', not its
	// admins'.
	env.MustKey(t, orgKey, 200, "PUT", "/api/v1/org/acme/ws/dev/member-limit", `{"member_limit": 1}`)
	adminKey, _, err := auth.Keys{Store: env.Store, Now: time.Now}.Create(context.Background(), store.APIKey{Name: "acme admin", Role: string(auth.RoleAdmin), OrgID: o.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, env.DoKey(t, adminKey, "PUT", "/api/v1/org/acme/ws/dev/member-limit", `{"member_limit": 1}`), 403, "role_too_low")
	// The org's own key reads its credits.
	env2 := env.DoKey(t, orgKey, "GET", "/api/v1/org/acme/credits", nil)
	if env2.Status != 200 {
		t.Fatalf("org key reading credits: %d %s", env2.Status, env2.Body)
	}
}

func TestCreditsBadInput(t *testing.T) {
	env, _, _, _ := billedEnv(t)
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"negative grant", "POST", "/api/v1/org/acme/credits/grants", `{"amount": -1, "idempotency_key": "k"}`, 400, "invalid_amount"},
		{"zero grant", "POST", "/api/v1/org/acme/credits/grants", `{"amount": 0, "idempotency_key": "k"}`, 400, "invalid_amount"},
		{"tiny grant", "POST", "/api/v1/org/acme/credits/grants", `{"amount": 0.0000001, "idempotency_key": "k"}`, 400, "invalid_amount"},
		{"huge grant", "POST", "/api/v1/org/acme/credits/grants", `{"amount": 1e300, "idempotency_key": "k"}`, 400, "invalid_amount"},
		{"no key", "POST", "/api/v1/org/acme/credits/grants", `{"amount": 1}`, 400, "invalid_idempotency_key"},
		{"long key", "POST", "/api/v1/org/acme/credits/grants", `{"amount": 1, "idempotency_key": "` + strings.Repeat("k", 256) + `"}`, 400, "invalid_idempotency_key"},
		{"control in key", "POST", "/api/v1/org/acme/credits/grants", `{"amount": 1, "idempotency_key": "a\nb"}`, 400, "invalid_idempotency_key"},
		{"long note", "POST", "/api/v1/org/acme/credits/grants", `{"amount": 1, "idempotency_key": "k", "note": "` + strings.Repeat("n", 1025) + `"}`, 400, "invalid_note"},
		{"amount as a string", "POST", "/api/v1/org/acme/credits/grants", `{"amount": "5", "idempotency_key": "k"}`, 400, "invalid_field_type"},
		{"unknown field", "POST", "/api/v1/org/acme/credits/grants", `{"amount": 5, "idempotency_key": "k", "to": "bob"}`, 400, "unknown_field"},
		{"no body", "POST", "/api/v1/org/acme/credits/grants", nil, 400, "missing_body"},
		{"negative balance", "POST", "/api/v1/org/acme/credits/balance", `{"balance": -3, "idempotency_key": "k"}`, 400, "invalid_amount"},
		{"unknown org", "GET", "/api/v1/org/nope/credits", nil, 404, "org_not_found"},
		{"journal: bad kind", "GET", "/api/v1/org/acme/credits/journal?kind=gift", nil, 400, "invalid_filter"},
		{"journal: bad sandbox id", "GET", "/api/v1/org/acme/credits/journal?sandbox_id=x", nil, 400, "invalid_filter"},
		{"journal: bad time", "GET", "/api/v1/org/acme/credits/journal?from=yesterday", nil, 400, "invalid_time"},
		{"journal: empty range", "GET", "/api/v1/org/acme/credits/journal?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", nil, 400, "invalid_time_range"},
		{"journal: bad cursor", "GET", "/api/v1/org/acme/credits/journal?cursor=zzz", nil, 400, "invalid_cursor"},
		{"journal: bad limit", "GET", "/api/v1/org/acme/credits/journal?limit=0", nil, 400, "invalid_limit"},
		{"usage: bad group", "GET", "/api/v1/org/acme/usage?group_by=user", nil, 400, "invalid_group_by"},
		{"usage: bad interval", "GET", "/api/v1/org/acme/usage?interval=week", nil, 400, "invalid_interval"},
		{"holds: bad cursor", "GET", "/api/v1/org/acme/credits/holds?cursor=zzz", nil, 400, "invalid_cursor"},
		{"holds: unknown org", "GET", "/api/v1/org/nope/credits/holds", nil, 404, "org_not_found"},
		{"usage: from in the future", "GET", "/api/v1/org/acme/usage?from=2099-01-01T00:00:00Z", nil, 400, "invalid_time_range"},
		{"member: bad name", "POST", "/api/v1/org/acme/ws/dev/members", `{"member": "-rf"}`, 400, "invalid_member"},
		{"member: empty", "POST", "/api/v1/org/acme/ws/dev/members", `{"member": ""}`, 400, "invalid_member"},
		{"member: unknown workspace", "POST", "/api/v1/org/acme/ws/nope/members", `{"member": "a@b.io"}`, 404, "workspace_not_found"},
		{"member: remove unknown", "DELETE", "/api/v1/org/acme/ws/dev/members/nobody", nil, 404, "member_not_found"},
		{"member: remove bad name", "DELETE", "/api/v1/org/acme/ws/dev/members/%20x", nil, 400, "invalid_member"},
		{"limit: negative", "PUT", "/api/v1/org/acme/ws/dev/member-limit", `{"member_limit": -1}`, 400, "invalid_member_limit"},
		{"limit: huge", "PUT", "/api/v1/org/acme/ws/dev/member-limit", `{"member_limit": 1e12}`, 400, "invalid_field_type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, env.Do(t, tc.method, tc.path, tc.body), tc.status, tc.code)
		})
	}
}

func TestMembersAndLimit(t *testing.T) {
	env, clock, _, rtPath := billedEnv(t)
	env.Must(t, 201, "POST", "/api/v1/org/acme/credits/grants", client.GrantCreditsRequest{Amount: 100, IdempotencyKey: "g"})
	const ws = "/api/v1/org/acme/ws/dev"
	var lim client.MemberLimit
	env.Must(t, 200, "GET", ws+"/member-limit", nil).Decode(t, &lim)
	if lim.MemberLimit != 0 || lim.Members != 0 || lim.OverLimit {
		t.Fatalf("initial limit = %+v", lim)
	}
	env.Must(t, 200, "PUT", ws+"/member-limit", client.SetMemberLimitRequest{MemberLimit: 1}).Decode(t, &lim)
	if lim.MemberLimit != 1 {
		t.Fatalf("limit = %+v", lim)
	}
	var m client.WorkspaceMember
	env.Must(t, 201, "POST", ws+"/members", client.AddMemberRequest{Member: "alice@example.com"}).Decode(t, &m)
	if m.Member != "alice@example.com" || m.ID == "" {
		t.Fatalf("member = %+v", m)
	}
	wantError(t, env.Do(t, "POST", ws+"/members", client.AddMemberRequest{Member: "alice@example.com"}), 409, "member_exists")

	var rt client.Runtime
	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)

	// A second member is over the limit: compute pauses, starts refuse.
	clock.Advance(time.Second)
	env.Must(t, 201, "POST", ws+"/members", client.AddMemberRequest{Member: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"})
	rt = runtimeOf(t, env.Must(t, 200, "GET", rtPath, nil))
	if rt.Status != client.RuntimePaused || rt.PauseReason != client.PauseMemberLimitExceeded {
		t.Fatalf("runtime over the limit = %+v", rt)
	}
	env.Must(t, 200, "GET", ws+"/member-limit", nil).Decode(t, &lim)
	if !lim.OverLimit || lim.Members != 2 {
		t.Fatalf("limit over = %+v", lim)
	}
	wantError(t, env.Do(t, "POST", rtPath+"/resume", nil), 402, "member_limit_exceeded")
	var list client.List[client.WorkspaceMember]
	env.Must(t, 200, "GET", ws+"/members", nil).Decode(t, &list)
	if len(list.Items) != 2 || list.Items[0].Member != "alice@example.com" || list.Items[1].Member != "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266" {
		t.Fatalf("members = %+v", list.Items)
	}

	// Back under: resume works again.
	if r := env.Do(t, "DELETE", ws+"/members/0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", nil); r.Status != 204 {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	rt = runtimeOf(t, env.Must(t, 200, "POST", rtPath+"/resume", nil))
	if rt.Status != client.RuntimeRunning {
		t.Fatalf("resumed = %+v", rt)
	}
}
