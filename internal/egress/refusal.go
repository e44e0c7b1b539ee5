package egress

// Refusal is the kind of a decision that let nothing through, for code to
// tell them apart (Decision.Reason says the same for people). An allowed
// decision has none.
type Refusal string

// Kinds of refusal.
const (
	// RefusalNone: the decision allowed the request.
	RefusalNone Refusal = ""
	// RefusalNotAllowed: no allow rule matches the destination.
	RefusalNotAllowed Refusal = "not_allowed"
	// RefusalDenied: a deny rule matches the destination.
	RefusalDenied Refusal = "denied"
	// RefusalInternal: the destination is an internal address the guard
	// closes.
	RefusalInternal Refusal = "internal"
	// RefusalUnresolved: a name a rule allows does not resolve.
	RefusalUnresolved Refusal = "unresolved"
	// RefusalUnavailable: the policy could not be read; a retry may pass.
	RefusalUnavailable Refusal = "unavailable"
	// RefusalUpstream: the rules allowed it, and the upstream failed
	// (refused the connection, timed out).
	RefusalUpstream Refusal = "upstream_failed"
	// RefusalMalformed: the request named no usable destination.
	RefusalMalformed Refusal = "malformed"
	// RefusalProxy: the proxy itself could not carry it (no tunnel
	// support, no certificate for a brokered host).
	RefusalProxy Refusal = "proxy"
)

// DenyRules returns the deny rules of p that refuse host on port by name,
// as they were written.
func (p Policy) DenyRules(host string, port int) []string {
	var out []string
	for _, r := range p.Deny {
		if r.matchesName(host, port) {
			out = append(out, r.raw)
		}
	}
	return out
}
