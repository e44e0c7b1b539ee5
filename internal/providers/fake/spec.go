package fake

import (
	"maps"
	"slices"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// labels are spec.Labels plus the standard ones, which a spec cannot
// override.
func labels(spec provider.Spec) map[string]string {
	l := maps.Clone(spec.Labels)
	if l == nil {
		l = map[string]string{}
	}
	l[provider.LabelManaged] = "true"
	l[provider.LabelInstance] = spec.Instance
	l[provider.LabelSandbox] = spec.SandboxID
	delete(l, provider.LabelRuntime)
	if spec.RuntimeID != "" {
		l[provider.LabelRuntime] = spec.RuntimeID
	}
	delete(l, provider.LabelOrg)
	if spec.OrgID != "" {
		l[provider.LabelOrg] = spec.OrgID
	}
	delete(l, provider.LabelWorkspace)
	return l
}

func cloneSpec(s provider.Spec) provider.Spec {
	s.Env = maps.Clone(s.Env)
	s.Labels = maps.Clone(s.Labels)
	return s
}

// validateSpec applies the Docker provider's rules, so tests against the
// fake see the errors production would give.
func (p *Provider) validateSpec(spec *provider.Spec) error {
	bad := func(format string, args ...any) error {
		return errdefs.InvalidArgument(CodeInvalidSpec, format, args...)
	}
	if spec.Instance == "" {
		spec.Instance = p.cfg.Instance
	}
	r := spec.Resources
	switch {
	case !validName(spec.SandboxID, 128):
		return bad("sandbox id %q is not valid: use letters, digits, '.', '_' and '-'", spec.SandboxID)
	case spec.Instance == "":
		return bad("an installation id (instance) is required")
	case spec.Image == "" || len(spec.Image) > 255 || strings.HasPrefix(spec.Image, "-") || strings.ContainsAny(spec.Image, " \t\n\x00"):
		return bad("image reference %q is not valid", spec.Image)
	case !validName(spec.Workspace, 255) || len(spec.Workspace) < 2:
		return bad("workspace volume name %q is not valid: use at least two of letters, digits, '.', '_' and '-'", spec.Workspace)
	case r.CPUMillis < 0 || r.MemoryMB < 0 || r.PidsLimit < 0 || r.DiskMB < 0:
		return bad("resources must not be negative")
	case r.CPUMillis > 0 && r.CPUMillis < 10:
		return bad("cpu_millis must be at least 10")
	case r.MemoryMB > 0 && r.MemoryMB < 6:
		return bad("memory_mb must be at least 6")
	case r.MemoryMB > 1<<30 || r.DiskMB > 1<<30 || r.CPUMillis > 1<<30:
		return bad("resources are out of range")
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
		spec.Network = provider.NetworkNone
	case provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen:
	default:
		return bad("network policy %q is not one of none, proxy, open", spec.Network)
	}
	if !slices.Contains(p.cfg.Networks, spec.Network) {
		return errdefs.NotImplemented(CodeNetworkNotSupported, "network policy %q is not offered by this provider", spec.Network)
	}
	return nil
}

// validName reports whether s is a valid Docker-style object name no longer
// than max: [a-zA-Z0-9][a-zA-Z0-9_.-]*.
func validName(s string, max int) bool {
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
