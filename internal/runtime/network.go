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
