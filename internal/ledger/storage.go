package ledger

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// StorageResult is what one round of storage charges did.
type StorageResult struct {
	Charged       int   // snapshots charged
	ChargedMicros int64 // credits they took
	// ShortfallMicros are credits their orgs could not pay.
	ShortfallMicros int64
}

// chargeSnapshots charges every snapshot's storage from its watermark up
// to upTo at the price list's snapshot rate: its size in GiB times the
// hours times the rate, rounded down to a micro-credit. A snapshot whose
// period is not yet worth a micro-credit waits (its watermark stays), so
// small snapshots are charged later, not never. Each charge moves the
// snapshot's watermark with it, so a period is charged once whatever
// replica charges it; a snapshot deleted or charged by another replica
// meanwhile is passed over, and a failure is logged and retried next round.
func (l *Ledger) chargeSnapshots(ctx context.Context, upTo time.Time) (StorageResult, error) {
	var res StorageResult
	rate := l.meter.pricing.SnapshotMicros
	if rate <= 0 {
		return res, nil
	}
	for after := ""; ; {
		snaps, err := l.store.ListSnapshotsAfter(ctx, after, batchRows)
		if err != nil || len(snaps) == 0 {
			return res, err
		}
		after = snaps[len(snaps)-1].ID
		for _, s := range snaps {
			amount := StorageCost(s.SizeBytes, upTo.Sub(s.BilledUntil), rate)
			if amount <= 0 {
				continue
			}
			e, err := l.store.ChargeSnapshotStorage(ctx, store.SnapshotCharge{
				OrgID: s.OrgID, SnapshotID: s.ID, From: s.BilledUntil, UpTo: upTo, AmountMicros: amount, At: upTo,
			})
			switch {
			case errdefs.IsNotFound(err) || errdefs.IsConflict(err):
				continue // deleted, or charged by another replica
			case err != nil:
				l.logger.ErrorContext(ctx, "charging a snapshot's storage failed; retrying next round", "snapshot", s.ID, "org", s.OrgID, "err", err)
				continue
			}
			res.Charged++
			res.ChargedMicros += -e.AmountMicros
			res.ShortfallMicros += e.ShortfallMicros
		}
	}
}
