package binding_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// Every apply the service starts in the background ends by Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Installing on a running runtime applies in the background; a runtime
// whose provider has no agent leaves the binding pending, Wait returns,
// and nothing is left running once the service closes.
func TestApplyInTheBackground(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	var p client.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", client.CreateProjectRequest{Name: "p"}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	for range 5 {
		var b client.CapabilityBinding
		env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: "repo-tools"}).Decode(t, &b)
		env.Must(t, 204, "DELETE", rtPath+"/capabilities/"+b.ID, nil)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := env.Bindings.Wait(ctx, p.RuntimeID); err != nil {
		t.Fatalf("wait: %v", err)
	}
	var b client.CapabilityBinding
	env.Must(t, 201, "POST", rtPath+"/capabilities", client.InstallCapabilityRequest{Name: "memory"}).Decode(t, &b)
	if err := env.Bindings.Wait(ctx, p.RuntimeID); err != nil {
		t.Fatalf("wait: %v", err)
	}
	var list client.List[client.CapabilityBinding]
	env.Must(t, 200, "GET", rtPath+"/capabilities", nil).Decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].Status.State != client.BindingPending {
		t.Fatalf("bindings: %+v", list.Items)
	}
	env.Bindings.Close()
	env.Bindings.Close() // twice is fine
}
