package binding

import (
	"encoding/json"
	"time"
)

// The binding domain's own types. What a binding row and an inventory row
// keep is written from these, never from the SDK's: their JSON tags are
// the stored shapes (versioned: see statusVersion and contentsVersion),
// and the API converts them to the wire types at its boundary.

// Capability sources: where a binding's bundle comes from.
const (
	SourceCatalog   = "catalog"   // built into paddock
	SourceInventory = "inventory" // uploaded to the org
)

// Binding apply states.
const (
	StatePending = "pending" // not yet applied to the current sandbox
	StateApplied = "applied" // materialized; setup ran
	StateFailed  = "failed"  // materializing or a setup script failed
)

// Worker states.
const (
	WorkerRunning = "running"
	WorkerExited  = "exited" // stopped by itself: crashed, or finished
	WorkerStopped = "stopped"
)

// Status is what happened when a binding was last applied to a sandbox:
// its setup scripts, checks and workers.
type Status struct {
	State     string         `json:"state"`
	Error     string         `json:"error,omitempty"`
	SandboxID string         `json:"sandbox_id,omitempty"`
	AppliedAt *time.Time     `json:"applied_at,omitempty"`
	Setup     []StepResult   `json:"setup"`
	Checks    []StepResult   `json:"checks"`
	Workers   []WorkerStatus `json:"workers"`
}

// StepResult is one setup script's or check's run.
type StepResult struct {
	Name       string    `json:"name"`
	OK         bool      `json:"ok"`
	ExitCode   int       `json:"exit_code"`
	Output     string    `json:"output"` // the last 4 KiB of stdout and stderr
	DurationMS int64     `json:"duration_ms"`
	RanAt      time.Time `json:"ran_at"`
}

// WorkerStatus is one worker's process.
type WorkerStatus struct {
	Name      string     `json:"name"`
	ProcessID string     `json:"process_id,omitempty"`
	State     string     `json:"state"`
	ExitCode  *int       `json:"exit_code,omitempty"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	Output    string     `json:"output,omitempty"` // its last 4 KiB, once exited
}

// Contents names what a bundle ships; an inventory row keeps it.
type Contents struct {
	Agents     []string `json:"agents"`
	Skills     []string `json:"skills"`
	Tools      []string `json:"tools"`
	MCPServers []string `json:"mcp_servers"`
	Workers    []string `json:"workers"`
	Setup      []string `json:"setup"`
	Checks     []string `json:"checks"`
	Flags      []Flag   `json:"flags"`
}

// Flag is a boolean a binding sets to gate MCP servers and workers.
type Flag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

// contentsVersion is the shape of the contents an inventory row keeps
// (its "v"): the JSON tags of Contents and Flag. A row without "v" was
// written before the shape had a version, in the same shape as version 1.
// A change to those tags takes a new version, and DecodeContents goes on
// reading the older ones.
const contentsVersion = 1

// storedContents is Contents as an inventory row keeps it.
type storedContents struct {
	V int `json:"v"`
	Contents
}

// encodeContents is c as an inventory row keeps it.
func encodeContents(c Contents) ([]byte, error) {
	return json.Marshal(storedContents{V: contentsVersion, Contents: c})
}

// DecodeContents reads the contents an inventory row keeps. What cannot be
// read (a newer version, or damaged) names nothing.
func DecodeContents(data []byte) Contents {
	var sc storedContents
	if json.Unmarshal(data, &sc) != nil || sc.V > contentsVersion {
		return Contents{}
	}
	return sc.Contents
}

// InstallRequest binds a capability to a runtime.
type InstallRequest struct {
	Name string
	// Version pins a version; empty takes the newest, pinned at install.
	Version string
	// Source is SourceCatalog or SourceInventory; empty looks in the org's
	// inventory first, then the catalog.
	Source string
	// Enabled defaults to true.
	Enabled *bool
	// Flags override the bundle's flag defaults.
	Flags map[string]bool
}

// UpdateRequest changes a binding.
type UpdateRequest struct {
	Enabled *bool
	// SetFlags replaces the binding's flags with Flags.
	SetFlags bool
	Flags    map[string]bool
	// Version, when set, moves the pin.
	Version string
}
