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

func (a *API) getUsage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, o, err := a.creditsOrg(r)
	if err != nil {
		return err
	}
	group := store.UsageGroup(r.URL.Query().Get("group_by"))
	switch group {
	case "":
		group = store.UsageByOrg
	case store.UsageBySandbox, store.UsageByRuntime, store.UsageByProject, store.UsageByWorkspace, store.UsageByOrg:
	default:
		return errdefs.InvalidArgument("invalid_group_by", "group_by must be one of sandbox, runtime, project, workspace, org")
	}
	interval := r.URL.Query().Get("interval")
	switch interval {
	case "":
		interval = "total"
	case "total", "day":
	default:
		return errdefs.InvalidArgument("invalid_interval", "interval must be total or day")
	}
	from, to, err := timeRange(r)
	if err != nil {
		return err
	}
	q := store.UsageQuery{OrgID: o.ID, GroupBy: group, From: from, To: to, Daily: interval == "day"}
	if to.IsZero() {
		// Up to now, including what was charged this very microsecond.
		to = a.now()
		if !from.IsZero() && !from.Before(to) {
			return errdefs.InvalidArgument("invalid_time_range", "from must be in the past")
		}
	}
	rows, err := l.Usage(ctx, q)
	if err != nil {
		return err
	}
	out := client.Usage{
		OrgID: o.ID, GroupBy: string(group), Interval: interval, From: timePtr(from), To: to,
		Items: make([]client.UsageItem, 0, len(rows)),
	}
	var total store.UsageRow
	n := a.tenancy.Names()
	for _, row := range rows {
		item := usageOut(row)
		item.Name = n.UsageKey(ctx, group, row.Key)
		item.Day = timePtr(row.Day)
		out.Items = append(out.Items, item)
		total.ChargedMicros += row.ChargedMicros
		total.RefundedMicros += row.RefundedMicros
		total.ShortfallMicros += row.ShortfallMicros
		total.Entries += row.Entries
	}
	out.Total = usageOut(total)
	writeJSON(w, http.StatusOK, out)
	return nil
}
