// Package sidecar knows the sidecar capabilities a runtime may ask for in
// capabilities_json (a JSON-encoded string array, as the blueprint's
// provisioning takes it): what each one is, the sandbox image that carries
// it, and how a sandbox learns of them (SIDECAR_CAPABILITIES).
package sidecar

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// The sidecar capabilities.
const (
	// ComputerUse starts a virtual display, a browser and an MCP server
	// with screenshot, mouse and keyboard tools in the sandbox.
	ComputerUse = "computer_use"
	// AllHarness runs the sandbox on the image with every harness CLI
	// installed.
	AllHarness = "all_harness"
)

// Images of the sidecar capabilities (scripts/build-images.sh builds them).
// The all-harness image is built on the computer-use one, so it carries
// both.
const (
	ComputerUseImage = "paddock/computer-use:bookworm"
	AllHarnessImage  = "paddock/all-harness:bookworm"
)

// EnvVar is the variable a sandbox's processes see the accepted values in,
// as the JSON array the runtime was given (normalized).
const EnvVar = "SIDECAR_CAPABILITIES"

// ComputerUse's MCP server, inside the sandbox.
const (
	ComputerUseDisplay = ":99"
	ComputerUseMCPURL  = "http://127.0.0.1:8931/mcp"
)

// Sidecar is one sidecar capability.
type Sidecar struct {
	Name        string
	Description string
	Image       string
}

var known = []Sidecar{
	{AllHarness, "the sandbox image with every harness CLI installed (Claude Code, Codex, OpenCode, Gemini, Kimi)", AllHarnessImage},
	{ComputerUse, "a virtual display, a Chromium browser and an MCP server with screenshot, mouse and keyboard tools", ComputerUseImage},
}

// Known lists the sidecar capabilities, by name.
func Known() []Sidecar { return slices.Clone(known) }

// Public error codes.
const (
	CodeInvalidJSON = "invalid_capabilities_json"
	CodeUnknown     = "unknown_sidecar_capability"
)

// Parse reads capabilities_json: a JSON array of known names. It returns
// them sorted and without repeats; "" is none.
func Parse(capabilitiesJSON string) ([]string, error) {
	if strings.TrimSpace(capabilitiesJSON) == "" {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(capabilitiesJSON), &names); err != nil {
		return nil, errdefs.InvalidArgument(CodeInvalidJSON, `capabilities_json must be a JSON-encoded array of strings, such as "[\"computer_use\"]"`)
	}
	for _, n := range names {
		if !slices.ContainsFunc(known, func(s Sidecar) bool { return s.Name == n }) {
			return nil, errdefs.InvalidArgument(CodeUnknown, "unknown sidecar capability %q; GET /api/capabilities lists them (%s)", n, strings.Join(Names(), ", "))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Names are the known names.
func Names() []string {
	out := make([]string, len(known))
	for i, s := range known {
		out[i] = s.Name
	}
	return out
}

// JSON is the normalized capabilities_json of names ("" for none).
func JSON(names []string) string {
	if len(names) == 0 {
		return ""
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// Image is the image a runtime with names runs on, or "" when they ask
// for none in particular.
func Image(names []string) string {
	switch {
	case slices.Contains(names, AllHarness):
		return AllHarnessImage
	case slices.Contains(names, ComputerUse):
		return ComputerUseImage
	}
	return ""
}

// IsImage reports whether image is one that sidecar capabilities choose.
func IsImage(image string) bool { return image == AllHarnessImage || image == ComputerUseImage }

// ShimPath is where the agent binary is in every sandbox.
const ShimPath = "/.paddock/bin/paddock-shim"

// ComputerUseArgv is the command that runs computer_use's services in a
// sandbox: the agent binary starts the display and the browser, supervises
// them, and serves the MCP server at ComputerUseMCPURL.
func ComputerUseArgv() []string {
	return []string{ShimPath, "computer-use", "serve", "--display", ComputerUseDisplay, "--listen", "127.0.0.1:8931"}
}

// Env is what the processes of a sandbox of rt learn of its sidecar
// capabilities: SIDECAR_CAPABILITIES, and computer_use's display. It is
// part of the environment the agent injects (never the container's).
func Env(rt store.Runtime) map[string]string {
	if len(rt.Config.Sidecars) == 0 {
		return nil
	}
	env := map[string]string{EnvVar: JSON(rt.Config.Sidecars)}
	if slices.Contains(rt.Config.Sidecars, ComputerUse) {
		env["DISPLAY"] = ComputerUseDisplay
	}
	return env
}
