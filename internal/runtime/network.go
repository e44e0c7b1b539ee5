package runtime

import (
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// checkNetwork validates an egress policy: its mode, every rule, and that
// no allow rule names an internal address the installation did not open
// (a stored rule that does, from before the guard, answers the same at the
// runtime's next configuration change; the proxy refuses it meanwhile).
func (s *Service) checkNetwork(n store.NetworkConfig) error {
	switch provider.NetworkPolicy(n.Mode) {
	case provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen:
	default:
		return errdefs.InvalidArgument("invalid_network", "network mode must be one of none, proxy, open")
	}
	pol, err := egress.ParsePolicy(n.Allow, n.Deny)
	if err != nil {
		return err
	}
	return s.guard.CheckPolicy(pol)
}

// checkRulesApply refuses allow or deny rules given for a runtime whose
// network is not proxy (none or open), where nothing would apply them.
// Rules kept from before a switch away from proxy are not given: they
// apply again in proxy mode.
func checkRulesApply(mode string, allow, deny []string) error {
	if mode != string(provider.NetworkProxy) && len(allow)+len(deny) > 0 {
		return errdefs.InvalidArgument(CodeRulesNeedProxy,
			"network rules (allow %v, deny %v) apply only in proxy mode, and this runtime's network is %s: set mode proxy, or drop the rules", allow, deny, mode)
	}
	return nil
}

// CodeRulesNeedProxy refuses allow or deny rules on a runtime whose
// network is not proxy, where nothing would apply them.
const CodeRulesNeedProxy = "network_rules_need_proxy"
