package api

import (
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

func usageOut(r store.UsageRow) client.UsageItem {
	return client.UsageItem{
		Key: r.Key, Charged: ledger.Credits(r.ChargedMicros), Refunded: ledger.Credits(r.RefundedMicros),
		Net: ledger.Credits(r.NetMicros()), Shortfall: ledger.Credits(r.ShortfallMicros), Entries: r.Entries,
	}
}

func (a *API) getUsage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	l, err := a.credits()
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	o, err := a.org(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	group := store.UsageGroup(r.URL.Query().Get("group_by"))
	switch group {
	case "":
		group = store.UsageByOrg
	case store.UsageBySandbox, store.UsageByRuntime, store.UsageByProject, store.UsageByWorkspace, store.UsageByOrg:
	default:
		writeError(ctx, w, a.logger, errdefs.InvalidArgument("invalid_group_by", "group_by must be one of sandbox, runtime, project, workspace, org"))
		return
	}
	from, to, err := timeRange(r)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	q := store.UsageQuery{OrgID: o.ID, GroupBy: group, From: from, To: to}
	if to.IsZero() {
		// Up to now, including what was charged this very microsecond.
		to = a.now()
		if !from.IsZero() && !from.Before(to) {
			writeError(ctx, w, a.logger, errdefs.InvalidArgument("invalid_time_range", "from must be in the past"))
			return
		}
	}
	rows, err := l.Usage(ctx, q)
	if err != nil {
		writeError(ctx, w, a.logger, err)
		return
	}
	out := client.Usage{
		OrgID: o.ID, GroupBy: string(group), From: timePtr(from), To: to,
		Items: make([]client.UsageItem, 0, len(rows)),
	}
	var total store.UsageRow
	for _, row := range rows {
		out.Items = append(out.Items, usageOut(row))
		total.ChargedMicros += row.ChargedMicros
		total.RefundedMicros += row.RefundedMicros
		total.ShortfallMicros += row.ShortfallMicros
		total.Entries += row.Entries
	}
	out.Total = usageOut(total)
	writeJSON(w, http.StatusOK, out)
}
