package fake

import (
	"maps"

	"github.com/paddockhq/paddock/internal/provider"
)

func cloneSpec(s provider.Spec) provider.Spec {
	s.Env = maps.Clone(s.Env)
	s.Labels = maps.Clone(s.Labels)
	return s
}

// validateSpec applies the rules every provider shares, so tests against
// the fake see the errors production would give.
func (p *Provider) validateSpec(spec *provider.Spec) error {
	return provider.Validate(spec, p.cfg.Instance, p.cfg.Networks)
}

// validName reports whether s is a valid object name no longer than max.
func validName(s string, max int) bool { return provider.ValidName(s, max) }
