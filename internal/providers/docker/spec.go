package docker

import (
	"slices"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// validateSpec checks spec and fills the instance from the config.
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
	case r.CPUMillis < 0 || r.MemoryMB < 0 || r.PidsLimit < 0 || r.DiskMB < 0 || r.TmpMB < 0:
		return bad("resources must not be negative")
	case r.DiskMB > 0 && r.DiskMB < minDiskMB:
		return bad("disk_mb must be at least %d", minDiskMB)
	case r.CPUMillis > 0 && r.CPUMillis < 10:
		return bad("cpu_millis must be at least 10")
	case r.MemoryMB > 0 && r.MemoryMB < 6:
		return bad("memory_mb must be at least 6")
	case r.MemoryMB > 1<<30 || r.DiskMB > 1<<30 || r.TmpMB > 1<<30 || r.CPUMillis > 1<<30:
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
	case "", provider.NetworkNone:
		spec.Network = provider.NetworkNone
	case provider.NetworkProxy, provider.NetworkOpen:
		if !slices.Contains(p.offeredNetworks(), spec.Network) {
			return errdefs.NotImplemented(CodeNetworkNotSupported, "network policy %q is not offered by this docker provider (it needs egress networks, and runc)", spec.Network)
		}
	default:
		return bad("network policy %q is not one of none, proxy, open", spec.Network)
	}
	return nil
}

// validName reports whether s is a valid Docker object name no longer than
// max: [a-zA-Z0-9][a-zA-Z0-9_.-]*.
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
