package server

import (
	"context"
	"fmt"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/metrics"
)

// ledgerPart is the ledger component's instance: the ledger, its settler
// and the goroutine that runs it under its lease.
type ledgerPart struct {
	ledger  *ledger.Ledger
	settler *ledger.Settler
	loop    *automation
}

// ledgerComponent keeps credits and mounts their routes. Its settler,
// started once the server starts, charges running compute every settle
// interval and pauses what an org can no longer pay for, while this
// replica holds the settle lease (one replica of a store settles); it
// stops before the runtime service and the store close.
func (w *wiring) ledgerComponent() component.Registration {
	return component.Def[*ledgerPart]{
		Name:     ledgerName,
		Requires: []string{storeName, runtimeName, metricsName},
		Init: func(_ context.Context, ic *component.InitContext) (*ledgerPart, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			m, err := component.Get[*metrics.Metrics](ic, metricsName)
			if err != nil {
				return nil, err
			}
			cfg, err := component.SectionOf[*config.LedgerConfig](ic)
			if err != nil {
				return nil, err
			}
			newOrg, err := ledger.MicrosOf(cfg.NewOrgCredits)
			if err != nil {
				return nil, fmt.Errorf("new org credits: %w", err)
			}
			logger := in.logger.With("component", "ledger")
			lp := &ledgerPart{ledger: ledger.New(ledger.Config{
				Store: in.st, Meter: rp.meter, Runtimes: rp.svc, NewOrgMicros: newOrg, Now: w.now, Logger: logger,
			})}
			lp.settler = ledger.NewSettler(lp.ledger, ledger.SettlerConfig{
				Interval: cfg.SettleInterval,
				AfterTick: func(res ledger.TickResult, err error) {
					m.CreditsDeducted(res.ChargedMicros)
					if err != nil {
						in.logger.Error("settling running compute", "err", err)
					}
				},
			})
			in.logger.Info("credits", "pricing", rp.pricing.String())
			w.mount(api.Credits(lp.ledger))
			lp.loop = &automation{}
			if !w.o.Manual {
				lp.loop.run = func(ctx context.Context) { in.leases.Run(ctx, leaseSettle, lp.settler.Run) }
			}
			return lp, nil
		},
		Start: func(ctx context.Context, lp *ledgerPart) error {
			lp.loop.start(ctx)
			return nil
		},
		Close: func(_ context.Context, lp *ledgerPart) error {
			lp.loop.close()
			return nil
		},
	}.Registration()
}
