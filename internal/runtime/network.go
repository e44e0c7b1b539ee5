package runtime

import (
	"github.com/paddockhq/paddock/internal/egress"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
)

// checkNetwork validates an egress policy: its mode, and every rule.
func checkNetwork(n store.NetworkConfig) error {
	switch provider.NetworkPolicy(n.Mode) {
	case provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen:
	default:
		return errdefs.InvalidArgument("invalid_network", "network mode must be one of none, proxy, open")
	}
	_, err := egress.ParsePolicy(n.Allow, n.Deny)
	return err
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
