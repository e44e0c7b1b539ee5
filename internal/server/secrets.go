package server

import (
	"context"

	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/secrets"
)

// secretsComponent loads the keyring (made on first start unless the
// configuration gives the key) and keeps the orgs' secrets with it.
func (w *wiring) secretsComponent() component.Registration {
	return component.Def[*secrets.Service]{
		Name:     secretsName,
		Requires: []string{storeName},
		Init: func(_ context.Context, ic *component.InitContext) (*secrets.Service, error) {
			in, err := component.Get[*installation](ic, storeName)
			if err != nil {
				return nil, err
			}
			cfg, err := component.SectionOf[*config.SecretsConfig](ic)
			if err != nil {
				return nil, err
			}
			keys, err := secrets.LoadKeyring(in.dataDir, cfg.SecretsKey)
			if err != nil {
				return nil, err
			}
			return secrets.New(in.st, keys, in.logger.With("component", "secrets")), nil
		},
	}.Registration()
}
