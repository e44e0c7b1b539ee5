package dialect

import (
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Host names hosts' records.
const Host Resource = "host"

// CheckHost validates a new host.
func CheckHost(h store.Host) error {
	if err := Required(Host, "id", h.ID, "org id", h.OrgID, "name", h.Name, "address", h.Address,
		"user", h.User, "host key", h.HostKey, "key id", h.KeyID); err != nil {
		return err
	}
	if h.IdleTeardown < 0 || h.CostPerHourMicros < 0 {
		return errdefs.InvalidArgument("invalid_host", "a host's idle teardown and cost per hour are not negative")
	}
	if len(h.SealedKey) == 0 {
		return errdefs.InvalidArgument("invalid_host", "a host's key is required")
	}
	if m := h.Mode.OrDefault(); m != store.HostContainer && m != store.HostBare {
		return errdefs.InvalidArgument("invalid_host", "a host's mode is %s or %s", store.HostContainer, store.HostBare)
	}
	return nil
}

// HostExists is the refusal of a host name taken in its org.
func HostExists(cause error) error {
	return errdefs.Conflict("host_exists", "a host of this name exists in the org").WithCause(cause)
}
