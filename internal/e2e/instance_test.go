package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestInstanceModeOnDocker: a server in instance mode on real Docker,
// driven through the Go SDK's instance operations (/api/sandbox): a
// secret bound there is in the sandbox it starts; exec, stop (the
// container paused), resume, a snapshot of the workspace, a port opened
// and proxied all act on the configured runtime.
func TestInstanceModeOnDocker(t *testing.T) {
	instance := testenv.Instance(t)
	env := servertest.New(t, servertest.Options{
		Provider: testenv.DockerProvider(t, instance), Instance: instance, Image: testenv.TestImage,
		InstanceMode: config.InstanceConfig{Instance: "acme/dev/svc"},
	})
	ctx := t.Context()
	sdk, err := pc.New(env.URL, env.Key)
	if err != nil {
		t.Fatal(err)
	}
	in := sdk.Instance()
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", pc.CreateSecretRequest{Name: "svc-token", Value: "instance-secret"})
	if _, err := in.BindSecret(ctx, "svc-token"); err != nil {
		t.Fatal(err)
	}
	rt, err := in.Start(ctx, pc.StartRuntimeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cli := testenv.DockerClient(t)
	if cs := containersOf(t, cli, rt.ID); len(cs) != 1 {
		t.Fatalf("the instance's runtime %s has %d containers", rt.ID, len(cs))
	}
	res, err := in.Exec(ctx, pc.ExecRequest{Argv: []string{"sh", "-c", `echo "$SVC_TOKEN"; echo kept > /workspace/kept`}})
	if err != nil || string(res.Stdout) != "instance-secret\n" {
		t.Fatalf("exec: %+v %v", res, err)
	}

	if _, err := in.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st := containersOf(t, cli, rt.ID)[0].State; st != "paused" {
		t.Fatalf("after stop the container is %s, want paused", st)
	}
	if _, err := in.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if st := containersOf(t, cli, rt.ID)[0].State; st != "running" {
		t.Fatalf("after resume the container is %s, want running", st)
	}

	snap, err := in.Snapshot(ctx, pc.CreateSnapshotRequest{Name: "svc-1"})
	if err != nil || snap.RuntimeID != rt.ID || snap.SizeBytes <= 0 {
		t.Fatalf("snapshot: %+v %v", snap, err)
	}
	if l, err := in.ListSnapshots(ctx, pc.ListOptions{}); err != nil || len(l.Items) != 1 || l.Items[0].ID != snap.ID {
		t.Fatalf("the instance's snapshots: %+v %v", l.Items, err)
	}
	instancePortOnDocker(t, env, sdk, rt.ID)
}

// instancePortOnDocker starts the test web server in the instance's
// sandbox, opens its port through the instance and reaches it through
// the instance's port proxy without a credential.
func instancePortOnDocker(t *testing.T, env *servertest.Env, sdk *pc.Client, runtimeID string) {
	t.Helper()
	installWebserver(t, sdk, runtimeID)
	in := sdk.Instance()
	testenv.Eventually(t, func() error {
		ports, err := in.ListPorts(t.Context())
		if err != nil {
			return err
		}
		for _, p := range ports.Items {
			if p.Port == 8080 && p.Listening {
				return nil
			}
		}
		return fmt.Errorf("the web server does not listen: %+v", ports.Items)
	})
	if _, err := in.SetPortPublic(t.Context(), 8080, true); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(env.URL + in.PortPath(8080))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "hello from the sandbox") {
		t.Fatalf("the instance's port proxy: %d %s", resp.StatusCode, b)
	}
}
