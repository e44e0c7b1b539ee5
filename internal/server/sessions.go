package server

import (
	"context"
	"fmt"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/binding"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/session"
)

// sessionsComponent runs harnesses in runtimes (prompts and tasks) and
// keeps their transcripts; it mounts their routes.
func (w *wiring) sessionsComponent() component.Registration {
	return component.Def[*session.Service]{
		Name:     sessionsName,
		Requires: []string{storeName, runtimeName, bindingsName, secretsName, egressName},
		Init: func(_ context.Context, ic *component.InitContext) (*session.Service, error) {
			cfg, err := component.SectionOf[*config.SessionsConfig](ic)
			if err != nil {
				return nil, err
			}
			if _, ok := harness.Lookup(cfg.DefaultHarness); cfg.DefaultHarness != "" && !ok {
				return nil, fmt.Errorf("default harness %q is not one of paddock's harnesses (GET /api/capabilities lists them)", cfg.DefaultHarness)
			}
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			rp, err := component.Get[*runtimePart](ic, runtimeName)
			if err != nil {
				return nil, err
			}
			b, err := component.Get[*binding.Service](ic, bindingsName)
			if err != nil {
				return nil, err
			}
			sec, err := component.Get[*secrets.Service](ic, secretsName)
			if err != nil {
				return nil, err
			}
			e, err := component.Get[*egressPart](ic, egressName)
			if err != nil {
				return nil, err
			}
			s := session.New(session.Config{
				Store: in.st, Runtimes: rp.svc, Bindings: b, Secrets: sec,
				Logger: in.logger.With("component", "sessions"), DefaultHarness: cfg.DefaultHarness,
				EgressRecorded: e.gate.Recorded(), Now: w.now,
			})
			w.mount(api.Sessions(s))
			return s, nil
		},
	}.Registration()
}
