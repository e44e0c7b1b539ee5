package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestProxyModeEndToEnd drives the proxy mode as a user would, on the
// built binaries and real Docker networks: a runtime allowed one registry
// (served by the test on the host's loopback, named registry.test through
// the server's host map) fetches from it with curl, which finds the proxy
// through the environment the agent injects; anything else is refused; a
// deny added while the sandbox runs applies at once; and the egress log
// shows each decision.
func TestProxyModeEndToEnd(t *testing.T) {
	wheelName, wheel := demoWheel(t)
	registry := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/paddock-demo/": // a PEP 503 index of one package
			sum := sha256.Sum256(wheel)
			fmt.Fprintf(w, `<html><body><a href="/files/%s#sha256=%x">%s</a></body></html>`, wheelName, sum, wheelName)
		case "/files/" + wheelName:
			w.Write(wheel)
		default:
			fmt.Fprintf(w, "registry ok %s", r.URL.Path)
		}
	})}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go registry.Serve(l)
	t.Cleanup(func() { registry.Close() })
	regPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	// A link-local listener the test makes stands in for cloud metadata:
	// were the guard to fail, nothing beyond this host would be reached.
	meta := makeStandIn(t)

	const key = "pdk_00000000000000000000000000000000000000000000e9e5"
	// The host map opens the registry's address for its name on its port
	// only.
	_, c := serveWithEgress(t, key, "PADDOCK_EGRESS_HOSTS=registry.test=127.0.0.1:"+regPort)
	ctx := t.Context()
	allowed := "registry.test:" + regPort
	p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "agent", Runtime: &pc.RuntimeConfig{
		Image: testenv.DefaultImage, MemoryMB: 256,
		Network: &pc.NetworkPolicy{Mode: pc.NetworkProxy, Allow: []string{allowed}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}
	sh := func(script string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		res, err := c.Exec(ctx, "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"bash", "-c", script}})
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		return strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
	}

	if got := sh("curl -sS http://registry.test:" + regPort + "/simple/hello/"); got != "registry ok /simple/hello/" {
		t.Fatalf("through the proxy: %q", got)
	}
	// pip installs from the registry through the proxy, into the
	// workspace (the root is read-only).
	pip := "pip install -q --disable-pip-version-check --index-url http://registry.test:" + regPort + "/simple/ --trusted-host registry.test paddock-demo" +
		" && python3 -c 'import paddock_demo; print(paddock_demo.hello())'"
	if got := sh(pip); !strings.HasPrefix(got, "hello from the registry") {
		t.Fatalf("pip install through the proxy: %q", got)
	}
	if got := sh(`[ -n "$HTTPS_PROXY" ] && [ -n "$NO_PROXY" ] && echo set`); got != "set" {
		t.Fatalf("proxy environment: %q", got)
	}
	// Without the proxy there is no way out: no route, no DNS.
	if got := sh("curl -sS --noproxy '*' -m 3 -o /dev/null -w '%{http_code}' http://registry.test:" + regPort + "/ 2>/dev/null; echo \" exit=$?\""); !strings.Contains(got, "exit=") || strings.HasPrefix(got, "200") {
		t.Fatalf("around the proxy: %q", got)
	}
	// NO_PROXY keeps loopback inside the sandbox; --noproxy '' sends even
	// that to the proxy, which must refuse the host's loopback.
	refused := func(url string) {
		t.Helper()
		if got := sh("curl -s --noproxy '' -o /dev/null -w '%{http_code}' " + url); got != "403" {
			t.Errorf("%s: %q, want the proxy's 403", url, got)
		}
	}
	refused("http://registry.test:1/")                   // the allowed host, another port
	refused("http://" + meta.meta.String() + "/latest/") // link-local, as cloud metadata
	refused("http://127.0.0.1:" + regPort + "/")         // the host's loopback by address

	// A deny, while the sandbox runs, applies at once.
	up, err := c.ConfigureRuntime(ctx, "acme", "dev", p.RuntimeID, pc.RuntimePatch{
		Network: &pc.NetworkPatch{Deny: &[]string{allowed}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(up.Live, ",") != "network.deny" || len(up.NextStart) != 0 {
		t.Fatalf("a new deny rule: live %v, next start %v", up.Live, up.NextStart)
	}
	refused("http://registry.test:" + regPort + "/simple/hello/")

	// The log has them all, newest first.
	var log pc.List[pc.EgressDecision]
	testenv.WaitFor(t, "7 decisions in the egress log", func() bool {
		log, err = c.ListEgress(ctx, "acme", "dev", p.RuntimeID, pc.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(log.Items) >= 7
	})
	// curl, pip's index and its download, three refusals, the deny.
	if len(log.Items) != 7 {
		t.Fatalf("egress log has %d decisions, want 7: %+v", len(log.Items), log.Items)
	}
	newest, oldest := log.Items[0], log.Items[6]
	if newest.Allowed || newest.Reason != "denied by rule "+allowed || newest.Host != "registry.test" {
		t.Errorf("newest decision: %+v", newest)
	}
	if !oldest.Allowed || oldest.Method != "GET" || oldest.Port != mustPort(regPort) || oldest.BytesDown == 0 ||
		oldest.Addr != "127.0.0.1:"+regPort || oldest.SandboxID == "" {
		t.Errorf("oldest decision: %+v", oldest)
	}
	for _, d := range log.Items[1:4] {
		if d.Allowed {
			t.Errorf("decision %+v: want refused", d)
		}
	}
	for _, d := range log.Items[4:6] {
		if !d.Allowed || d.Host != "registry.test" {
			t.Errorf("pip's decision %+v: want allowed", d)
		}
	}
}

func mustPort(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// egressServer is what serveWithEgress started.
type egressServer struct {
	*server
	instance, dataDir string
	// proxyNet and openNet name its networks; proxyPort is the proxy's.
	proxyNet, openNet string
	proxyPort         int
}

// serveWithEgress starts the built server with the proxy and open modes on
// networks of its own (removed, with their firewall rules, when the test
// ends), and makes org acme and workspace dev.
func serveWithEgress(t testing.TB, key string, extraEnv ...string) (*egressServer, *pc.Client) {
	t.Helper()
	testenv.RequireDocker(t, testenv.DefaultImage)
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	// Registered first, so it runs after the server is stopped: the
	// sandboxes, then the networks and their firewall rules.
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	suffix := uuid.NewString()[:8]
	data, runDir := t.TempDir(), filepath.Join(testenv.ShortTempDir(t), "r")
	es := &egressServer{instance: instance, dataDir: data, proxyNet: "pdk-e2e-p-" + suffix, openNet: "pdk-e2e-o-" + suffix, proxyPort: freePort(t)}
	env := append([]string{
		"PADDOCK_EGRESS_DISABLED=false",
		"PADDOCK_EGRESS_PROXY_NETWORK=" + es.proxyNet,
		"PADDOCK_EGRESS_OPEN_NETWORK=" + es.openNet,
		"PADDOCK_EGRESS_PROXY_PORT=" + strconv.Itoa(es.proxyPort),
	}, extraEnv...)
	s := serveIn(t, bin, shim, data, runDir, instance, key, env...)
	es.server = s
	c := sdkFor(t, s, key)
	if _, err := c.CreateOrg(t.Context(), pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(t.Context(), "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	return es, c
}

// freePort returns a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// demoWheel builds a pure-Python wheel, paddock-demo 1.0, whose module
// says hello: a package for a local index, no internet needed.
func demoWheel(t *testing.T) (string, []byte) {
	t.Helper()
	files := []struct{ name, body string }{
		{"paddock_demo/__init__.py", "def hello():\n    return \"hello from the registry\"\n"},
		{"paddock_demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: paddock-demo\nVersion: 1.0\n"},
		{"paddock_demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: paddock-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("paddock_demo-1.0.dist-info/RECORD,,\n")
	w, err := zw.Create("paddock_demo-1.0.dist-info/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return "paddock_demo-1.0-py3-none-any.whl", buf.Bytes()
}
