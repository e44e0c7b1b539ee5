package docker

import (
	"github.com/paddockhq/paddock/internal/provider"
)

// validateSpec checks spec against the rules every provider shares and
// fills the instance from the config.
func (p *Provider) validateSpec(spec *provider.Spec) error {
	return provider.Validate(spec, p.cfg.Instance, p.offeredNetworks())
}

// validName reports whether s is a valid Docker object name no longer than
// max.
func validName(s string, max int) bool { return provider.ValidName(s, max) }
