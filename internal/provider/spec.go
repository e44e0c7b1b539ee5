package provider

import (
	"maps"
	"slices"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Error codes every provider gives for the same mistakes.
const (
	CodeInvalidSpec         = "invalid_spec"
	CodeNetworkNotSupported = "network_policy_not_supported"
)

// MinDiskMB is the smallest workspace disk quota a spec may ask for.
const MinDiskMB = 16

// Validate checks the rules every provider shares and fills what a spec may
// leave out: the instance (from instance) and the network policy (none).
// offered are the network policies the provider can give; a policy outside
// them is refused with CodeNetworkNotSupported (kind ErrNotImplemented).
// Providers check what only they know (images, host capacity) themselves.
func Validate(spec *Spec, instance string, offered []NetworkPolicy) error {
	bad := func(format string, args ...any) error {
		return errdefs.InvalidArgument(CodeInvalidSpec, format, args...)
	}
	if spec.Instance == "" {
		spec.Instance = instance
	}
	r := spec.Resources
	switch {
	case !ValidName(spec.SandboxID, 128):
		return bad("sandbox id %q is not valid: use letters, digits, '.', '_' and '-'", spec.SandboxID)
	case spec.Instance == "":
		return bad("an installation id (instance) is required")
	case spec.Image == "" || len(spec.Image) > 255 || strings.HasPrefix(spec.Image, "-") || strings.ContainsAny(spec.Image, " \t\n\x00"):
		return bad("image reference %q is not valid", spec.Image)
	case !ValidName(spec.Workspace, 255) || len(spec.Workspace) < 2:
		return bad("workspace volume name %q is not valid: use at least two of letters, digits, '.', '_' and '-'", spec.Workspace)
	case r.CPUMillis < 0 || r.MemoryMB < 0 || r.PidsLimit < 0 || r.DiskMB < 0 || r.TmpMB < 0:
		return bad("resources must not be negative")
	case r.DiskMB > 0 && r.DiskMB < MinDiskMB:
		return bad("disk_mb must be at least %d", MinDiskMB)
	case r.CPUMillis > 0 && r.CPUMillis < 10:
		return bad("cpu_millis must be at least 10")
	case r.MemoryMB > 0 && r.MemoryMB < 6:
		return bad("memory_mb must be at least 6")
	case r.MemoryMB > 1<<30 || r.DiskMB > 1<<30 || r.TmpMB > 1<<30 || r.CPUMillis > 1<<30:
		return bad("resources are out of range")
	case spec.User != "" && spec.User != UserDefault && spec.User != UserRoot:
		return bad("user %q is not valid: use %q or %q", spec.User, UserDefault, UserRoot)
	}
	for k, v := range spec.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return bad("environment variable %q is not valid", k)
		}
	}
	for k, v := range spec.Labels {
		if k == "" || strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
			return bad("label %q is not valid", k)
		}
	}
	switch spec.Network {
	case "":
		spec.Network = NetworkNone
	case NetworkNone, NetworkProxy, NetworkOpen:
	default:
		return bad("network policy %q is not one of none, proxy, open", spec.Network)
	}
	if spec.Group != "" {
		if !ValidName(spec.Group, 64) || !ValidName(spec.GroupName, 63) {
			return bad("group %q and its member name %q must be letters, digits, '.', '_' and '-'", spec.Group, spec.GroupName)
		}
		if spec.Network != NetworkNone {
			return bad("a sandbox of a group is on its group's network only: its network policy must be none")
		}
		return nil
	}
	if !slices.Contains(offered, spec.Network) {
		return errdefs.NotImplemented(CodeNetworkNotSupported, "network policy %q is not offered by this provider", spec.Network)
	}
	return nil
}

// StandardLabels returns spec.Labels with the standard labels set over them
// (a spec cannot override those): managed, instance, sandbox, and the
// runtime, org and provider when known. The workspace label belongs to
// volumes only and is removed.
func StandardLabels(spec Spec, providerName string) map[string]string {
	l := maps.Clone(spec.Labels)
	if l == nil {
		l = map[string]string{}
	}
	for _, k := range []string{LabelRuntime, LabelOrg, LabelWorkspace, LabelProvider} {
		delete(l, k)
	}
	l[LabelManaged] = "true"
	l[LabelInstance] = spec.Instance
	l[LabelSandbox] = spec.SandboxID
	if spec.RuntimeID != "" {
		l[LabelRuntime] = spec.RuntimeID
	}
	if spec.OrgID != "" {
		l[LabelOrg] = spec.OrgID
	}
	if providerName != "" {
		l[LabelProvider] = providerName
	}
	return l
}

// ValidName reports whether s is a valid object name no longer than max:
// [a-zA-Z0-9][a-zA-Z0-9_.-]*, as Docker names containers and volumes.
func ValidName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}
