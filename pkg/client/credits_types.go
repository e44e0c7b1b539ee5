package client

import "time"

// Credits: the wire format of org balances, the credit journal, usage and
// workspace seats. Amounts are decimal numbers of credits (exact to a
// millionth, the ledger's unit).

// Credit movement kinds.
const (
	EntryGrant      = "grant"      // credits added by an admin
	EntryAdjustment = "adjustment" // balance set by an admin
	EntryHold       = "hold"       // credits reserved for a start or resume
	EntryRelease    = "release"    // a hold freed: the compute never ran
	EntryDeduction  = "deduction"  // compute charged
	EntryRefund     = "refund"     // prepaid compute that did not run, returned
)

// Usage groupings.
const (
	UsageBySandbox   = "sandbox"
	UsageByRuntime   = "runtime"
	UsageByProject   = "project"
	UsageByWorkspace = "workspace"
	UsageByOrg       = "org"
)

// CreditAccount is an org's balance and its most recent movements.
// Available is what a new start may reserve: the balance less the credits
// held for compute being started.
type CreditAccount struct {
	OrgID     string        `json:"org_id"`
	Balance   float64       `json:"balance"`
	Held      float64       `json:"held"`
	Available float64       `json:"available"`
	UpdatedAt *time.Time    `json:"updated_at,omitempty"`
	Recent    []CreditEntry `json:"recent"`
}

// CreditEntry is one credit movement of the append-only journal. Amount is
// the change to the balance (negative for a deduction) and HeldChange the
// change to the held credits.
type CreditEntry struct {
	ID             string     `json:"id"`
	Seq            int64      `json:"seq"`
	Kind           string     `json:"kind"`
	Amount         float64    `json:"amount"`
	HeldChange     float64    `json:"held_change"`
	BalanceAfter   float64    `json:"balance_after"`
	HeldAfter      float64    `json:"held_after"`
	Shortfall      float64    `json:"shortfall,omitempty"`
	SandboxID      string     `json:"sandbox_id,omitempty"`
	RuntimeID      string     `json:"runtime_id,omitempty"`
	ProjectID      string     `json:"project_id,omitempty"`
	WorkspaceID    string     `json:"workspace_id,omitempty"`
	PeriodStart    *time.Time `json:"period_start,omitempty"`
	PeriodEnd      *time.Time `json:"period_end,omitempty"`
	IdempotencyKey string     `json:"idempotency_key"`
	Note           string     `json:"note,omitempty"`
	Actor          string     `json:"actor,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
}

// GrantCreditsRequest adds Amount credits to an org. A request retried
// with the same IdempotencyKey grants once and answers the first entry.
type GrantCreditsRequest struct {
	Amount         float64 `json:"amount"`
	IdempotencyKey string  `json:"idempotency_key"`
	Note           string  `json:"note,omitempty"`
}

// SetBalanceRequest sets an org's balance (journaled as an adjustment).
type SetBalanceRequest struct {
	Balance        float64 `json:"balance"`
	IdempotencyKey string  `json:"idempotency_key"`
	Note           string  `json:"note,omitempty"`
}

// JournalFilter narrows a journal listing. Empty fields match everything;
// the time range is [From, To).
type JournalFilter struct {
	SandboxID string
	RuntimeID string
	ProjectID string
	Kind      string
	From      time.Time
	To        time.Time
	Cursor    string
	Limit     int
}

// UsageQuery asks what compute cost in [From, To), grouped by GroupBy
// (sandbox, runtime, project, workspace or org; default org). A zero To
// means now.
type UsageQuery struct {
	GroupBy string
	From    time.Time
	To      time.Time
}

// Usage is what an org's compute cost over a time range, per group, from
// the journal's deductions and refunds.
type Usage struct {
	OrgID   string      `json:"org_id"`
	GroupBy string      `json:"group_by"`
	From    *time.Time  `json:"from,omitempty"`
	To      time.Time   `json:"to"`
	Items   []UsageItem `json:"items"`
	Total   UsageItem   `json:"total"`
}

// UsageItem is the usage of one group. Key is the sandbox, runtime,
// project, workspace or org id; Name is what people call it (a runtime's
// project name, a project's, a workspace's or an org's; none for a
// sandbox). Net is Charged less Refunded; Shortfall is compute that ran
// but could not be paid for.
type UsageItem struct {
	Key       string  `json:"key"`
	Name      string  `json:"name,omitempty"`
	Charged   float64 `json:"charged"`
	Refunded  float64 `json:"refunded"`
	Net       float64 `json:"net"`
	Shortfall float64 `json:"shortfall"`
	Entries   int64   `json:"entries"`
}

// WorkspaceMember is a user's membership of a workspace. Member is the
// user's handle: the email, else the wallet address, else the name.
type WorkspaceMember struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	UserID      string    `json:"user_id"`
	Member      string    `json:"member"`
	CreatedAt   time.Time `json:"created_at"`
}

// AddMemberRequest adds a member of the org to a workspace. Member names
// the user: an email address, a wallet address or a user id. Anyone who is
// not a member of the org is not found ("member_not_found"), unless the
// installation allows direct adds (members.direct_add), where an existing
// user named by address joins the org as a member. Only the installation
// admin makes users: its add of an address no user has yet makes one.
type AddMemberRequest struct {
	Member string `json:"member"`
}

// MemberLimit is a workspace's member limit (0 = none) and member count.
// Over its limit, its compute is paused and starts are refused.
type MemberLimit struct {
	WorkspaceID string `json:"workspace_id"`
	MemberLimit int    `json:"member_limit"`
	Members     int    `json:"members"`
	OverLimit   bool   `json:"over_limit"`
}

// SetMemberLimitRequest sets a workspace's member limit (0 = none).
type SetMemberLimitRequest struct {
	MemberLimit int `json:"member_limit"`
}
