package binding

import (
	"reflect"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// storedAt is the time in the stored shapes below.
var storedAt = time.Date(2026, 11, 20, 9, 30, 0, 123456000, time.UTC)

// storedStatus is the status whose stored shapes follow.
func storedStatus() status {
	code := 3
	return status{Status: Status{State: StateFailed, Error: "setup install failed (exit 2)", SandboxID: "sb-1", AppliedAt: &storedAt,
		Setup:  []StepResult{{Name: "install", ExitCode: 2, Output: "boom\n", DurationMS: 41, RanAt: storedAt}},
		Checks: []StepResult{{Name: "lint", OK: true, DurationMS: 7, RanAt: storedAt}},
		Workers: []WorkerStatus{{Name: "indexer", ProcessID: "p-1", State: WorkerExited, ExitCode: &code, StartedAt: &storedAt, Output: "bye"},
			{Name: "w2", State: WorkerRunning}}}, Rev: 4}
}

// statusV0 is storedStatus as binding rows kept it before their shape had
// a version: the SDK's BindingStatus marshalled with the revision.
const statusV0 = `{"state":"failed","error":"setup install failed (exit 2)","sandbox_id":"sb-1","applied_at":"2026-11-20T09:30:00.123456Z",` +
	`"setup":[{"name":"install","ok":false,"exit_code":2,"output":"boom\n","duration_ms":41,"ran_at":"2026-11-20T09:30:00.123456Z"}],` +
	`"checks":[{"name":"lint","ok":true,"exit_code":0,"output":"","duration_ms":7,"ran_at":"2026-11-20T09:30:00.123456Z"}],` +
	`"workers":[{"name":"indexer","process_id":"p-1","state":"exited","exit_code":3,"started_at":"2026-11-20T09:30:00.123456Z","output":"bye"},` +
	`{"name":"w2","state":"running"}],"rev":4}`

// statusV1 is storedStatus as a binding row keeps it now.
var statusV1 = `{"v":1,` + statusV0[1:]

// TestStatusStoredShape: a binding row's status is written in the shape
// of version 1, field names and all, whatever the SDK's are; rows of
// version 1 and of before versions (v0, the same fields) read back the
// same; a newer version this server cannot read is pending.
func TestStatusStoredShape(t *testing.T) {
	got, err := encodeStatus(storedStatus())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != statusV1 {
		t.Fatalf("stored status\n got %s\nwant %s", got, statusV1)
	}
	for name, row := range map[string]string{"v0": statusV0, "v1": statusV1} {
		want := storedStatus()
		want.V = map[string]int{"v0": 0, "v1": 1}[name]
		if got := statusOf(store.CapabilityBinding{Status: []byte(row)}); !reflect.DeepEqual(got, want) {
			t.Errorf("%s read as %+v, want %+v", name, got, want)
		}
	}
	newer := store.CapabilityBinding{Status: []byte(`{"v":2,` + statusV0[1:])}
	if got := statusOf(newer); got.State != StatePending || got.Rev != 0 || got.Workers == nil {
		t.Errorf("a newer version read as %+v, want pending", got)
	}
}

// contentsV0 is what an inventory row kept before its shape had a
// version: the SDK's CapabilityContents marshalled; contentsV1 is the same
// contents as a row keeps them now.
const contentsV0 = `{"agents":[],"skills":["memory"],"tools":[],"mcp_servers":["memory"],"workers":[],"setup":[],"checks":["python3"],` +
	`"flags":[{"name":"memory","description":"Configure the memory MCP server in every agent harness.","default":true}]}`

var contentsV1 = `{"v":1,` + contentsV0[1:]

// TestContentsStoredShape: an inventory row's contents are written in the
// shape of version 1, and rows of version 1 and of before versions read
// back the same; a newer version names nothing.
func TestContentsStoredShape(t *testing.T) {
	c := Contents{Agents: []string{}, Skills: []string{"memory"}, Tools: []string{}, MCPServers: []string{"memory"},
		Workers: []string{}, Setup: []string{}, Checks: []string{"python3"},
		Flags: []Flag{{Name: "memory", Description: "Configure the memory MCP server in every agent harness.", Default: true}}}
	got, err := encodeContents(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != contentsV1 {
		t.Fatalf("stored contents\n got %s\nwant %s", got, contentsV1)
	}
	for _, row := range []string{contentsV0, contentsV1} {
		if got := DecodeContents([]byte(row)); !reflect.DeepEqual(got, c) {
			t.Errorf("%s read as %+v", row, got)
		}
	}
	if got := DecodeContents([]byte(`{"v":2,` + contentsV0[1:])); !reflect.DeepEqual(got, Contents{}) {
		t.Errorf("a newer version read as %+v, want nothing", got)
	}
}
