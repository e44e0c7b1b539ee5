package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// The rows below are in the exact shapes paddock wrote before stored
// shapes had versions (no "v"), when the binding status, the inventory
// contents and the transcript events were the SDK's types marshalled as
// they are: byte for byte what that code wrote. They still load, and the
// API answers them byte for byte as it did.

// oldStatus is a binding status row of that time; SANDBOX is the
// sandbox it was applied to. The wire shows it without "rev".
const oldStatus = `{"state":"failed","error":"setup install failed (exit 2)","sandbox_id":"SANDBOX","applied_at":"2026-11-20T09:30:00.123456Z",` +
	`"setup":[{"name":"install","ok":false,"exit_code":2,"output":"boom\n","duration_ms":41,"ran_at":"2026-11-20T09:30:00.123456Z"}],` +
	`"checks":[{"name":"lint","ok":true,"exit_code":0,"output":"","duration_ms":7,"ran_at":"2026-11-20T09:30:00.123456Z"}],` +
	`"workers":[{"name":"indexer","process_id":"p-1","state":"exited","exit_code":3,"started_at":"2026-11-20T09:30:00.123456Z","output":"bye"},` +
	`{"name":"w2","state":"running"}],"rev":1}`

// oldFailedStatus is one written when a binding's bundle could not be
// loaded: its lists were null.
const oldFailedStatus = `{"state":"failed","error":"capability x 1 not found","sandbox_id":"SANDBOX","setup":null,"checks":null,"workers":null,"rev":1}`

// oldContents is an inventory row's contents of that time.
const oldContents = `{"agents":[],"skills":["memory"],"tools":[],"mcp_servers":["memory"],"workers":[],"setup":[],"checks":["python3"],` +
	`"flags":[{"name":"memory","description":"Configure the memory MCP server in every agent harness.","default":true}]}`

// oldEvents are a transcript's rows of that time.
var oldEvents = []string{
	`{"seq":1,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"message","role":"user","text":"list the files"}`,
	`{"seq":2,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"tool_call","tool":{"id":"tu_1","name":"Bash","input":{"command":"ls"}}}`,
	`{"seq":3,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"tool_result","result":{"id":"tu_1","output":"a.go\n","is_error":false}}`,
	`{"seq":4,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"message","role":"assistant","text":"one file: a.go"}`,
	`{"seq":5,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"usage","usage":{"input_tokens":120,"output_tokens":30,"cache_read_tokens":100,"cost_usd":0.0125}}`,
	`{"seq":6,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"error","error":{"code":"harness_failed","message":"it broke"}}`,
	`{"seq":7,"turn":1,"time":"2026-11-20T09:30:00.123456Z","type":"done","done":{"exit_code":1,"harness_session_id":"h-1","result":"one file: a.go"}}`,
}

// TestRowsWrittenBeforeVersionsLoad writes rows in the shapes of that time
// into the real store and reads them through the API.
func TestRowsWrittenBeforeVersionsLoad(t *testing.T) {
	env, _, rtPath := setup(t)
	ctx := context.Background()
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	rt := runtimeOf(t, env.Must(t, 200, "GET", rtPath, nil))
	if err := env.Bindings.Wait(ctx, rt.ID); err != nil { // the start's apply is over
		t.Fatal(err)
	}
	st, err := env.Store.GetRuntime(ctx, rt.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("binding status", func(t *testing.T) { oldStatusesLoad(t, env, st, rtPath) })
	t.Run("inventory contents", func(t *testing.T) { oldContentsLoad(t, env, st) })
	t.Run("transcript", func(t *testing.T) { oldTranscriptLoads(t, env, st, rtPath) })
}

// storedAt is when the rows of these tests were written.
var storedAt = time.Now().UTC().Truncate(time.Microsecond)

func oldStatusesLoad(t *testing.T, env *servertest.Env, rt store.Runtime, rtPath string) {
	ctx := context.Background()
	statuses := map[string]string{"memory": oldStatus, "repo-tools": oldFailedStatus}
	for name, row := range statuses {
		b, _ := capability.FromCatalog(name, "")
		id := uuid.NewString()
		if err := env.Store.CreateBinding(ctx, store.CapabilityBinding{ID: id, OrgID: rt.OrgID, RuntimeID: rt.ID,
			Source: client.SourceCatalog, Name: name, Version: b.Version, Enabled: true, CreatedAt: storedAt, UpdatedAt: storedAt}); err != nil {
			t.Fatal(err)
		}
		if err := env.Store.SetBindingStatus(ctx, id, []byte(strings.ReplaceAll(row, "SANDBOX", rt.CurrentSandboxID)), storedAt); err != nil {
			t.Fatal(err)
		}
	}
	var list struct {
		Items []struct {
			Name   string          `json:"name"`
			Status json.RawMessage `json:"status"`
		} `json:"items"`
	}
	env.Must(t, 200, "GET", rtPath+"/capabilities", nil).Decode(t, &list)
	want := map[string]string{
		"memory": strings.TrimSuffix(oldStatus, `,"rev":1}`) + "}",
		// As then: a status's lists are never null on the wire.
		"repo-tools": `{"state":"failed","error":"capability x 1 not found","sandbox_id":"SANDBOX","setup":[],"checks":[],"workers":[]}`,
	}
	if len(list.Items) != len(want) {
		t.Fatalf("bindings: %+v", list.Items)
	}
	for _, it := range list.Items {
		if w := strings.ReplaceAll(want[it.Name], "SANDBOX", rt.CurrentSandboxID); string(it.Status) != w {
			t.Errorf("%s's status\n got %s\nwant %s", it.Name, it.Status, w)
		}
	}
}

func oldContentsLoad(t *testing.T, env *servertest.Env, rt store.Runtime) {
	if err := env.Store.CreateCapabilityVersion(context.Background(), store.CapabilityVersion{ID: uuid.NewString(), OrgID: rt.OrgID,
		Name: "kit", Version: "1.0.0", Description: "A kit.", Digest: "sha256:00", Contents: []byte(oldContents),
		Bundle: []byte("tar"), SizeBytes: 3, CreatedAt: storedAt}); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Contents json.RawMessage `json:"contents"`
		} `json:"items"`
	}
	env.Must(t, 200, "GET", "/api/v1/org/acme/capabilities", nil).Decode(t, &list)
	if len(list.Items) != 1 || string(list.Items[0].Contents) != oldContents {
		t.Fatalf("inventory: %+v, want contents %s", list.Items, oldContents)
	}
}

func oldTranscriptLoads(t *testing.T, env *servertest.Env, rt store.Runtime, rtPath string) {
	ctx := context.Background()
	sess := store.Session{ID: uuid.NewString(), OrgID: rt.OrgID, WorkspaceID: rt.WorkspaceID, RuntimeID: rt.ID,
		Kind: "prompt", Harness: "claude-code", Status: "failed", Title: "list the files", Turns: 1,
		Events: int64(len(oldEvents)), CreatedAt: storedAt, UpdatedAt: storedAt}
	if err := env.Store.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	var rows []store.SessionEvent
	for i, body := range oldEvents {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(body), &head); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, store.SessionEvent{SessionID: sess.ID, Seq: int64(i + 1), Turn: 1, Type: head.Type, At: storedAt, Body: []byte(body)})
	}
	if err := env.Store.AppendSessionEvents(ctx, rows); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Events json.RawMessage `json:"events"`
	}
	env.Must(t, 200, "GET", rtPath+"/sessions/"+sess.ID, nil).Decode(t, &tr)
	if want := "[" + strings.Join(oldEvents, ",") + "]"; !bytes.Equal(tr.Events, []byte(want)) {
		t.Fatalf("transcript\n got %s\nwant %s", tr.Events, want)
	}
}
