package access_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// agentPath is w's Path with a runtime service on w's store and the fake
// provider (which runs no agent) to wake runtimes and dial their agents,
// as the API, the preview gateway and the SSH gateway are given, and a
// runtime of that service in workspace dev.
func agentPath(t *testing.T, w *world) (iam.Path, *runtime.Service, store.Runtime) {
	t.Helper()
	reg := provider.NewRegistry()
	reg.Register(fake.New(fake.Config{}))
	rs := runtime.New(runtime.Config{Store: w.st, Providers: reg, Instance: "i", Defaults: runtime.Defaults{Image: "paddock/base:1"}})
	t.Cleanup(func() { rs.Close() })
	_, rt, err := rs.CreateProject(context.Background(), w.dev, "agent", "", runtime.ConfigRequest{})
	must(t, err)
	return iam.Path{Access: w.svc, Agents: rs}, rs, rt
}

// TestPathFindsRuntimes: the API's runtime routes find {runtime_id} in
// their workspace (InWorkspace, behind the guard's Authorize) and the
// preview gateway a path URL's runtime (ResolveIn): the same runtime,
// looked up by the same code; another workspace's runtime is not found
// alike with one that does not exist, and an id that is no UUID is 400
// for the API.
func TestPathFindsRuntimes(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	for _, tc := range []struct {
		name, ws, id, want, code string
	}{
		{"its own", w.dev.ID, w.rtDev.ID, w.rtDev.ID, ""},
		{"another workspace's", w.dev.ID, w.rtOps.ID, "", "runtime_not_found"},
		{"another org's", w.dev.ID, w.rtW.ID, "", "runtime_not_found"},
		{"unknown", w.dev.ID, uuid.NewString(), "", "runtime_not_found"},
		{"no workspace", "", w.rtDev.ID, "", "runtime_not_found"},
		{"not a UUID", w.dev.ID, "not-a-uuid", "", "invalid_runtime_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := w.path.InWorkspace(ctx, tc.ws, tc.id)
			if rt.ID != tc.want || code(err) != tc.code {
				t.Fatalf("InWorkspace = %q, %v; want %q, %q", rt.ID, err, tc.want, tc.code)
			}
			if tc.code == "runtime_not_found" && reason(err) != "unknown_runtime" {
				t.Fatalf("InWorkspace refused %v; want the reason unknown_runtime", err)
			}
		})
	}
	viaAPI, err := w.path.InWorkspace(ctx, w.dev.ID, w.rtDev.ID)
	must(t, err)
	viaURL, err := w.path.ResolveIn(ctx, "acme", "dev", w.rtDev.ID)
	must(t, err)
	viaHost, err := w.path.Resolve(ctx, iam.ShortID(w.rtDev.ID))
	must(t, err)
	if !reflect.DeepEqual(viaAPI, viaURL) || !reflect.DeepEqual(viaAPI, viaHost) {
		t.Fatalf("one runtime, three answers: %+v, %+v, %+v", viaAPI, viaURL, viaHost)
	}
}

// TestPathDials: every door dials a runtime's agent through Path.Dial,
// with the runtime service's answers: a runtime without a sandbox is 409
// runtime_not_running, a paused one is woken first, a running one on a
// provider without an agent is 501 agent_not_supported; Wake wakes a
// paused runtime, keeping the reason's code.
func TestPathDials(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	p, rs, rt := agentPath(t, w)
	status := func() store.RuntimeStatus {
		t.Helper()
		got, err := w.path.InWorkspace(ctx, w.dev.ID, rt.ID)
		must(t, err)
		return got.Status
	}
	dial := func(want string) {
		t.Helper()
		got, err := w.path.InWorkspace(ctx, w.dev.ID, rt.ID)
		must(t, err)
		if _, err := p.Dial(ctx, got); code(err) != want {
			t.Fatalf("Dial a %s runtime = %v; want %s", got.Status, err, want)
		}
	}
	dial("runtime_not_running")
	if _, err := rs.Start(ctx, rt.ID, nil); err != nil {
		t.Fatal(err)
	}
	dial("agent_not_supported")
	if _, err := rs.Pause(ctx, rt.ID, store.PauseUser); err != nil {
		t.Fatal(err)
	}
	dial("agent_not_supported")
	if s := status(); s != store.RuntimeRunning {
		t.Fatalf("a paused runtime after Dial: %s, want running", s)
	}
	paused, err := rs.Pause(ctx, rt.ID, store.PauseUser)
	must(t, err)
	if err := p.Wake(ctx, paused, time.Minute); code(err) != "agent_not_supported" {
		t.Fatalf("Wake = %v; want the dial's code", err)
	}
	if s := status(); s != store.RuntimeRunning {
		t.Fatalf("a paused runtime after Wake: %s, want running", s)
	}
}
