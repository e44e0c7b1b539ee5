package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// GetCredits returns org's credit balance and its most recent movements.
func (c *Client) GetCredits(ctx context.Context, org string) (CreditAccount, error) {
	return call[CreditAccount](ctx, c, http.MethodGet, orgRoute(org, "credits"), nil, nil)
}

// GrantCredits adds credits to org; it needs an installation admin key.
// Retried with the same idempotency key it grants once and returns the
// first entry; the same key with another amount is a conflict with code
// "idempotency_key_reused".
func (c *Client) GrantCredits(ctx context.Context, org string, req GrantCreditsRequest) (CreditEntry, error) {
	return call[CreditEntry](ctx, c, http.MethodPost, orgRoute(org, "credits", "grants"), nil, req)
}

// SetCreditBalance sets org's balance (an adjustment in the journal); it
// needs an installation admin key. Idempotent like GrantCredits.
func (c *Client) SetCreditBalance(ctx context.Context, org string, req SetBalanceRequest) (CreditEntry, error) {
	return call[CreditEntry](ctx, c, http.MethodPost, orgRoute(org, "credits", "balance"), nil, req)
}

func (f JournalFilter) query() url.Values {
	q := queryOf(map[string]string{
		"sandbox_id": f.SandboxID, "runtime_id": f.RuntimeID, "project_id": f.ProjectID,
		"kind": f.Kind, "cursor": f.Cursor,
	}, f.Limit)
	setTime(q, "from", f.From)
	setTime(q, "to", f.To)
	return q
}

func setTime(q url.Values, key string, t time.Time) {
	if !t.IsZero() {
		q.Set(key, t.UTC().Format(time.RFC3339Nano))
	}
}

// ListCreditJournal lists one page of org's credit movements, newest
// first, narrowed by f.
func (c *Client) ListCreditJournal(ctx context.Context, org string, f JournalFilter) (List[CreditEntry], error) {
	return call[List[CreditEntry]](ctx, c, http.MethodGet, orgRoute(org, "credits", "journal"), f.query(), nil)
}

// GetUsage returns what org's compute cost, grouped as q says.
func (c *Client) GetUsage(ctx context.Context, org string, q UsageQuery) (Usage, error) {
	v := url.Values{}
	if q.GroupBy != "" {
		v.Set("group_by", q.GroupBy)
	}
	setTime(v, "from", q.From)
	setTime(v, "to", q.To)
	return call[Usage](ctx, c, http.MethodGet, orgRoute(org, "usage"), v, nil)
}

// ListMembers lists one page of a workspace's members.
func (c *Client) ListMembers(ctx context.Context, org, ws string, opts ListOptions) (List[WorkspaceMember], error) {
	return call[List[WorkspaceMember]](ctx, c, http.MethodGet, wsRoute(org, ws, "members"), opts.query(), nil)
}

// AddMember adds a member to a workspace. Going over the workspace's
// member limit pauses its running compute.
func (c *Client) AddMember(ctx context.Context, org, ws string, req AddMemberRequest) (WorkspaceMember, error) {
	return call[WorkspaceMember](ctx, c, http.MethodPost, wsRoute(org, ws, "members"), nil, req)
}

// RemoveMember removes a member from a workspace.
func (c *Client) RemoveMember(ctx context.Context, org, ws, member string) error {
	return c.callDiscard(ctx, http.MethodDelete, wsRoute(org, ws, "members", member), nil, nil)
}

// GetMemberLimit returns a workspace's member limit and count.
func (c *Client) GetMemberLimit(ctx context.Context, org, ws string) (MemberLimit, error) {
	return call[MemberLimit](ctx, c, http.MethodGet, wsRoute(org, ws, "member-limit"), nil, nil)
}

// SetMemberLimit sets a workspace's member limit (0 = none); it needs an
// installation admin key.
func (c *Client) SetMemberLimit(ctx context.Context, org, ws string, req SetMemberLimitRequest) (MemberLimit, error) {
	return call[MemberLimit](ctx, c, http.MethodPut, wsRoute(org, ws, "member-limit"), nil, req)
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
