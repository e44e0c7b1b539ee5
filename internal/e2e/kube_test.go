package e2e

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestShimImageTarget: scripts/build-images.sh shim makes
// paddock/shim:VERSION from a tar with nothing but the static agent at
// /paddock-shim, which runs alone in it (no libc, no shell); a second run
// finds it current.
func TestShimImageTarget(t *testing.T) {
	testenv.RequireDocker(t)
	if os.Geteuid() != 0 {
		t.Skip("scripts/build-images.sh runs as root")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	version := "e2e-" + hex.EncodeToString(b)
	img := "paddock/shim:" + version
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", img).Run() })
	build := func() string {
		t.Helper()
		cmd := exec.Command(filepath.Join(testenv.RepoRoot(t), "scripts", "build-images.sh"), "shim")
		cmd.Env = append(os.Environ(), "PADDOCK_VERSION="+version, "PATH="+os.Getenv("PATH")+":/usr/local/go/bin")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("build-images.sh shim: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := build(); !strings.Contains(out, "built "+img) {
		t.Fatalf("the first run did not build %s:\n%s", img, out)
	}
	inspect, err := exec.Command("docker", "image", "inspect", "-f",
		`{{json .Config.Entrypoint}} {{index .Config.Labels "dev.paddock.image"}} {{len .RootFS.Layers}}`, img).CombinedOutput()
	if err != nil || strings.TrimSpace(string(inspect)) != `["/paddock-shim"] shim 1` {
		t.Fatalf("%s: %s (%v), want the entrypoint /paddock-shim, label shim, one layer", img, inspect, err)
	}
	// The image holds one file: the agent, read-only and executable.
	c, err := exec.Command("docker", "create", img).Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(c))
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	list, err := exec.Command("sh", "-c", "docker export "+id+" | tar -tv").Output()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f := strings.Fields(line)
		if name := f[len(f)-1]; f[0][0] == '-' && f[2] != "0" && name != ".dockerenv" {
			files = append(files, f[0]+" "+name)
		}
	}
	if strings.Join(files, ",") != "-r-xr-xr-x paddock-shim" {
		t.Fatalf("files with content in %s: %q, want only paddock-shim, mode 0555", img, files)
	}
	out, err := exec.Command("docker", "run", "--rm", "--network", "none", img, "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != version {
		t.Fatalf("the agent in %s says %q (%v), want its version %s", img, out, err, version)
	}
	if out := build(); !strings.Contains(out, img+" is current") {
		t.Fatalf("the second run rebuilt %s:\n%s", img, out)
	}
}

// kubeEnv is a paddock serve whose providers are on the test cluster,
// named by a config file, and what a test needs to look at the cluster.
type kubeEnv struct {
	kc                         *testenv.KubeCluster
	bin, shim, data, key, inst string
	config                     string
	s                          *server
	c                          *pc.Client
}

// kubeProvider is one provider entry of a kubeEnv's config file.
type kubeProvider struct {
	name     string
	policies bool
	start    string // start_timeout; "" 90s
	// nowhere selects a node label no node has: the provider's Pods are
	// never scheduled, and its starts run until start_timeout.
	nowhere bool
	// docker makes it a provider on the host's Docker engine instead.
	docker bool
}

// newKubeEnv writes the config file of providers on the test cluster (the
// first the default; a running warm pool of pool sandboxes of a tenth of
// a core and 96 MiB when pool > 0) and starts a server on it, listening where Pods reach it.
func newKubeEnv(t *testing.T, pool int, providers ...kubeProvider) *kubeEnv {
	t.Helper()
	kc := testenv.Kube(t)
	shimImage := testenv.KubeShimImage(t)
	testenv.KubeImage(t, testenv.TestImage)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	e := &kubeEnv{kc: kc, bin: testenv.Binary(t, "paddock"), shim: testenv.Binary(t, "paddock-shim"),
		data: t.TempDir(), key: testenv.NewAdminKey(t), inst: "pdkkube-" + hex.EncodeToString(b)}
	// A provider of kind docker beside the cluster's leaves its networks
	// (egress, open) and any container on the host's engine: swept when
	// the test ends, so the engine's address pools do not run out.
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, e.inst) })
	proxy := netip.AddrPortFrom(kc.HostAddr, uint16(freeHostPort(t, kc.HostAddr)))
	var y strings.Builder
	var cidrs, from []string
	for _, c := range kc.PodCIDRs {
		cidrs = append(cidrs, c.String())
	}
	for _, a := range testenv.KubeAgentFrom(t, kc) { // where the server dials agents from
		from = append(from, a.String())
	}
	fmt.Fprintf(&y, "provider: %s\nproviders:\n", providers[0].name)
	for _, p := range providers {
		if p.docker {
			fmt.Fprintf(&y, "  - name: %s\n    kind: docker\n", p.name)
			continue
		}
		fmt.Fprintf(&y, `  - name: %s
    kind: kubernetes
    kubernetes:
      kubeconfig: %s
      namespace: %s
      runtime_class: %s
      storage_class: %s
      shim_image: %s
      image_pull_policy: Never
      network_policies: %t
      agent_from: [%s]
      proxy_address: %s
      pod_cidrs: [%s]
      start_timeout: %s
`, p.name, kc.Kubeconfig, kc.Namespace, kc.RuntimeClass, kc.StorageClass, shimImage, p.policies,
			strings.Join(from, ", "), proxy, strings.Join(cidrs, ", "), cmp.Or(p.start, "90s"))
		if p.nowhere {
			y.WriteString("      node_selector: {paddock.test/nowhere: \"true\"}\n")
		}
	}
	if pool > 0 {
		fmt.Fprintf(&y, "warm_pools:\n  - {cpu_millis: 100, memory_mb: 96, size: %d, running: true}\n", pool)
	}
	e.config = filepath.Join(e.data, "kube.yaml")
	if err := os.WriteFile(e.config, []byte(y.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	return e
}

// start runs paddock serve on e's data directory and config, and waits
// until its start-up reconciliation is done.
func (e *kubeEnv) start(t *testing.T) {
	t.Helper()
	cmd := serveCommand(t, e.bin, e.shim, e.data, "", e.inst, e.key,
		// The file names the providers, whatever the test run's
		// environment says; egress is on, its proxy where Pods reach it.
		"PADDOCK_PROVIDERS=", "PADDOCK_PROVIDER=", "PADDOCK_EGRESS_DISABLED=false")
	cmd.Args = append(cmd.Args, "--config", e.config, "--listen", netip.AddrPortFrom(e.kc.HostAddr, 0).String())
	s := launch(t, cmd, 3*time.Minute, nil)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("paddock serve's log:\n%s", s.logs)
		}
	})
	e.s, e.c = s, sdkFor(t, s, e.key)
}

// freeHostPort returns a port of addr nothing listens on now.
func freeHostPort(t testing.TB, addr netip.Addr) int {
	t.Helper()
	l, err := net.Listen("tcp4", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pods lists the Pods of e's installation that carry label=value.
func (e *kubeEnv) pods(t testing.TB, label, value string) []corev1.Pod {
	t.Helper()
	l, err := e.kc.Client.CoreV1().Pods(e.kc.Namespace).List(t.Context(), metav1.ListOptions{
		LabelSelector: provider.LabelInstance + "=" + e.inst + "," + label + "=" + value,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// livePod waits until the runtime's sandbox runs in one Pod, not being
// deleted, and returns it.
func (e *kubeEnv) livePod(t testing.TB, runtimeID string) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	testenv.Eventually(t, func() error {
		var live []corev1.Pod
		for _, p := range e.pods(t, provider.LabelRuntime, runtimeID) {
			if p.DeletionTimestamp == nil {
				live = append(live, p)
			}
		}
		if len(live) != 1 || live[0].Status.Phase != corev1.PodRunning {
			return fmt.Errorf("runtime %s has %d live Pods, want one running", runtimeID, len(live))
		}
		pod = live[0]
		return nil
	})
	return pod
}

// exec runs argv in the runtime's sandbox and returns its stdout.
func (e *kubeEnv) exec(t testing.TB, runtimeID string, argv ...string) string {
	t.Helper()
	res, err := e.c.Exec(t.Context(), "acme", "dev", runtimeID, pc.ExecRequest{Argv: argv})
	if err != nil {
		t.Fatalf("exec %q: %v", argv, err)
	}
	if res.Exit == nil || res.Exit.Code != 0 {
		t.Fatalf("exec %q: exit %+v, stderr %q", argv, res.Exit, res.Stderr)
	}
	return string(res.Stdout)
}

// project makes a project in acme/dev with cfg and returns its runtime's id.
func (e *kubeEnv) project(t testing.TB, name string, cfg pc.RuntimeConfig) string {
	t.Helper()
	p, err := e.c.CreateProject(t.Context(), "acme", "dev", pc.CreateProjectRequest{Name: name, Runtime: &cfg})
	if err != nil {
		t.Fatalf("project %s: %v", name, err)
	}
	return p.RuntimeID
}

// orgAndWorkspace makes org acme and its workspace dev.
func (e *kubeEnv) orgAndWorkspace(t testing.TB) {
	t.Helper()
	if _, err := e.c.CreateOrg(t.Context(), pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.CreateWorkspace(t.Context(), "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
}

// TestKubernetesProvider runs paddock serve on the test cluster through
// the API and the Go client: a runtime runs, execs and writes a file in a
// Pod; capabilities say Pods cannot pause and which networks are offered;
// idle expiry archives it (Pod deleted, claim kept); with its node
// cordoned the next exec wakes it on the other node with its file; a
// running warm Pod is claimed and relabelled for its runtime and org; and
// a killed server restarted finds its Pods, removes the one a cut-short
// start left, and settles the row of a Pod deleted behind its back.
func TestKubernetesProvider(t *testing.T) {
	e := newKubeEnv(t, 1, kubeProvider{name: "kube", policies: true}, kubeProvider{name: "nowhere", policies: true, nowhere: true})
	e.orgAndWorkspace(t)
	caps, err := e.c.Capabilities(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	kube, ok := caps.Providers["kube"]
	if !ok || kube.Pause || !kube.Agent || strings.Join(kube.Networks, ",") != "none,proxy,open" {
		t.Fatalf("capabilities of kube = %+v (listed %v), want no pause, an agent, networks none, proxy and open", kube, ok)
	}
	moved := kubeArchiveAndMove(t, e)
	warm := kubeWarmClaim(t, e)
	kubeCrash(t, e, moved, warm)
}

// kubeArchiveAndMove: a runtime runs and keeps a file; idle expiry
// archives it (its Pod deleted, its claim kept); with the node it ran on
// cordoned, the next exec wakes it on another node, file and all. It
// returns the runtime's id.
func kubeArchiveAndMove(t *testing.T, e *kubeEnv) string {
	rid := e.project(t, "mover", pc.RuntimeConfig{CPUMillis: 100, MemoryMB: 128, IdleTimeoutSeconds: 10})
	if _, err := e.c.StartRuntime(t.Context(), "acme", "dev", rid, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}
	first := e.livePod(t, rid)
	if got := e.exec(t, rid, "echo", "hi"); got != "hi\n" {
		t.Fatalf("exec echo hi = %q", got)
	}
	if _, err := e.c.WriteFile(t.Context(), "acme", "dev", rid, "/workspace/kept.txt", strings.NewReader("across nodes\n"), pc.WriteFileOptions{}); err != nil {
		t.Fatal(err)
	}
	claims := func() int {
		l, err := e.kc.Client.CoreV1().PersistentVolumeClaims(e.kc.Namespace).List(t.Context(), metav1.ListOptions{
			LabelSelector: provider.LabelInstance + "=" + e.inst + "," + provider.LabelWorkspace + "=" + rid,
		})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	if n := claims(); n != 1 {
		t.Fatalf("the runtime has %d claims, want its workspace's", n)
	}
	testenv.Eventually(t, func() error {
		rt, err := e.c.GetRuntime(t.Context(), "acme", "dev", rid)
		if err != nil || rt.Status != pc.RuntimeArchived {
			return fmt.Errorf("runtime %s (%v), waiting for idle expiry to archive it", rt.Status, err)
		}
		return nil
	})
	testenv.WaitFor(t, "the archived runtime's Pod to be deleted", func() bool { return len(e.pods(t, provider.LabelRuntime, rid)) == 0 })
	if n := claims(); n != 1 {
		t.Fatalf("after the archive the runtime has %d claims, want its workspace's kept", n)
	}

	t.Run("move", func(t *testing.T) { // the node is cordoned until it ends
		testenv.KubeCordon(t, e.kc, first.Spec.NodeName)
		if got := e.exec(t, rid, "cat", "/workspace/kept.txt"); got != "across nodes\n" {
			t.Fatalf("the file after the move = %q", got)
		}
		if second := e.livePod(t, rid); second.Spec.NodeName == first.Spec.NodeName || second.Name == first.Name {
			t.Fatalf("the woken runtime runs in %s on %s, first %s on %s (cordoned)", second.Name, second.Spec.NodeName, first.Name, first.Spec.NodeName)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	// It stays running from now on: the restart must find its Pod.
	long := int64(600)
	if _, err := e.c.ConfigureRuntime(t.Context(), "acme", "dev", rid, pc.RuntimePatch{IdleTimeoutSeconds: &long}); err != nil {
		t.Fatal(err)
	}
	e.exec(t, rid, "true")
	return rid
}

// kubeWarmClaim: the running warm pool's Pod is claimed by a matching
// runtime's start (no new Pod), and then carries the runtime's and org's
// labels. It returns the runtime's id.
func kubeWarmClaim(t *testing.T, e *kubeEnv) string {
	var ready pc.WarmSandbox
	testenv.Eventually(t, func() error {
		var st pc.WarmPoolStatus
		if err := getJSON(t, e.s.url+"/api/v1/warm-pool", e.key, &st); err != nil {
			return err
		}
		for _, p := range st.Pools {
			for _, w := range p.Sandboxes {
				if w.State == "ready" && p.Running && p.Provider == "kube" {
					ready = w
					return nil
				}
			}
		}
		return fmt.Errorf("no ready warm sandbox yet: %+v", st.Pools)
	})
	warmPods := e.pods(t, provider.LabelSandbox, ready.ID)
	if len(warmPods) != 1 || warmPods[0].Labels[provider.LabelRuntime] != "" || warmPods[0].Status.Phase != corev1.PodRunning {
		t.Fatalf("the warm sandbox's Pods = %d, want one running with no runtime label", len(warmPods))
	}
	rid := e.project(t, "warm", pc.RuntimeConfig{CPUMillis: 100, MemoryMB: 96})
	rt, err := e.c.StartRuntime(t.Context(), "acme", "dev", rid, pc.StartRuntimeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if rt.CurrentSandboxID != ready.ID {
		t.Fatalf("the start ran sandbox %s, not the warm %s", rt.CurrentSandboxID, ready.ID)
	}
	pod := e.livePod(t, rid)
	if pod.Name != warmPods[0].Name || pod.Labels[provider.LabelOrg] != rt.OrgID || pod.Labels[provider.LabelSandbox] != ready.ID {
		t.Fatalf("the runtime's Pod %s has labels %v, want the warm Pod %s naming org %s", pod.Name, pod.Labels, warmPods[0].Name, rt.OrgID)
	}
	if got := e.exec(t, rid, "echo", "claimed"); got != "claimed\n" {
		t.Fatalf("exec in the claimed Pod = %q", got)
	}
	return rid
}

// kubeCrash: the server is killed in the middle of a start, and a Pod is
// deleted while it is down; restarted, it finds the Pods it left running,
// removes the cut-short start's, and settles the row whose Pod is gone.
// Every Pod of the installation is then a live row's or the warm pool's,
// and every live row has its Pod.
func kubeCrash(t *testing.T, e *kubeEnv, running, vanishing string) {
	// The cut-short start's Pod is never scheduled (its provider selects
	// no node), so the server is surely killed in the middle of it.
	cut := e.project(t, "cut", pc.RuntimeConfig{Provider: "nowhere", CPUMillis: 100, MemoryMB: 128})
	go func() { _, _ = e.c.StartRuntime(context.Background(), "acme", "dev", cut, pc.StartRuntimeRequest{}) }()
	testenv.WaitFor(t, "the cut-short start's Pod", func() bool { return len(e.pods(t, provider.LabelRuntime, cut)) > 0 })
	e.s.kill(t)
	gone := e.livePod(t, vanishing)
	zero := int64(0)
	if err := e.kc.Client.CoreV1().Pods(e.kc.Namespace).Delete(t.Context(), gone.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the Pod deleted behind paddock's back to go", func() bool { return len(e.pods(t, provider.LabelRuntime, vanishing)) == 0 })

	e.start(t)
	if got := e.exec(t, running, "cat", "/workspace/kept.txt"); got != "across nodes\n" {
		t.Fatalf("after the restart the running runtime's file = %q", got)
	}
	rt, err := e.c.GetRuntime(t.Context(), "acme", "dev", vanishing)
	if err != nil || rt.Status != pc.RuntimeError {
		t.Fatalf("the runtime whose Pod was deleted is %s (%v), want error", rt.Status, err)
	}
	if sb, err := e.c.GetSandbox(t.Context(), "acme", gone.Labels[provider.LabelSandbox]); err != nil || sb.State != pc.SandboxKilled || sb.KillReason != "vanished" {
		t.Fatalf("its row = %+v (%v), want killed as vanished", sb, err)
	}
	if rt, err := e.c.GetRuntime(t.Context(), "acme", "dev", cut); err != nil || rt.Status != pc.RuntimeIdle {
		t.Fatalf("the runtime whose start was cut short is %s (%v), want idle", rt.Status, err)
	}
	testenv.WaitFor(t, "the cut-short start's Pod to be removed", func() bool { return len(e.pods(t, provider.LabelRuntime, cut)) == 0 })
	testenv.Eventually(t, func() error { return kubeAccounted(t, e) })
}

// kubeAccounted reports a Pod of e's installation that is neither a
// live ledger row's nor a warm sandbox's, or a live row without its Pod.
// The Pods are listed first: one made after that is not looked at.
func kubeAccounted(t testing.TB, e *kubeEnv) error {
	pods := e.pods(t, provider.LabelManaged, "true")
	rows, err := e.c.ListSandboxes(t.Context(), "acme", pc.SandboxFilter{Limit: 100})
	if err != nil {
		return err
	}
	var st pc.WarmPoolStatus
	if err := getJSON(t, e.s.url+"/api/v1/warm-pool", e.key, &st); err != nil {
		return err
	}
	owner := map[string]bool{}
	for _, p := range st.Pools {
		for _, w := range p.Sandboxes {
			owner[w.ID] = true
		}
	}
	for _, sb := range rows.Items {
		if sb.State == pc.SandboxRunning || sb.State == pc.SandboxPaused || sb.State == pc.SandboxStarting {
			owner[sb.ID] = true
			if n := len(e.pods(t, provider.LabelSandbox, sb.ID)); n != 1 {
				return fmt.Errorf("live row %s (%s) has %d Pods", sb.ID, sb.State, n)
			}
		}
	}
	for _, p := range pods {
		if !owner[p.Labels[provider.LabelSandbox]] && p.DeletionTimestamp == nil {
			return fmt.Errorf("Pod %s (sandbox %s) is an orphan: no live row or warm sandbox", p.Name, p.Labels[provider.LabelSandbox])
		}
	}
	return nil
}

// TestKubernetesUnenforcedNetworks: on a cluster declared without
// NetworkPolicy enforcement, the provider offers only open, and a runtime
// asking for none (the default) or proxy is refused with a clear 4xx,
// never run silently open. A Pod that cannot start within start_timeout
// (no node matches its provider's selector) fails its start with the
// provider's reason, and leaves no Pod.
func TestKubernetesUnenforcedNetworks(t *testing.T) {
	e := newKubeEnv(t, 0, kubeProvider{name: "open-only", policies: false},
		kubeProvider{name: "nowhere", policies: false, start: "5s", nowhere: true})
	e.orgAndWorkspace(t)
	caps, err := e.c.Capabilities(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := caps.Providers["open-only"]; strings.Join(got.Networks, ",") != "open" || got.Pause {
		t.Fatalf("capabilities = %+v, want only the open network and no pause", got)
	}
	for _, mode := range []string{"", "none", "proxy"} {
		cfg := pc.RuntimeConfig{CPUMillis: 100, MemoryMB: 128}
		if mode != "" {
			cfg.Network = &pc.NetworkPolicy{Mode: mode}
		}
		_, err := e.c.CreateProject(t.Context(), "acme", "dev", pc.CreateProjectRequest{Name: "net-" + cmp.Or(mode, "default"), Runtime: &cfg})
		var ae *pc.Error
		if !errors.As(err, &ae) || ae.StatusCode < 400 || ae.StatusCode > 499 || ae.Code != "network_policy_not_supported" {
			t.Fatalf("a runtime asking network %q: %v, want a 4xx network_policy_not_supported", mode, err)
		}
	}
	rid := e.project(t, "open", pc.RuntimeConfig{CPUMillis: 100, MemoryMB: 128, Network: &pc.NetworkPolicy{Mode: "open"}})
	if _, err := e.c.StartRuntime(t.Context(), "acme", "dev", rid, pc.StartRuntimeRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := e.exec(t, rid, "echo", "open"); got != "open\n" {
		t.Fatalf("exec in the open runtime = %q", got)
	}

	stuck := e.project(t, "stuck", pc.RuntimeConfig{Provider: "nowhere", CPUMillis: 100, MemoryMB: 128, Network: &pc.NetworkPolicy{Mode: "open"}})
	_, err = e.c.StartRuntime(t.Context(), "acme", "dev", stuck, pc.StartRuntimeRequest{})
	var ae *pc.Error
	if !errors.As(err, &ae) || ae.StatusCode == http.StatusInternalServerError || ae.Code == "internal" {
		t.Fatalf("a start no node can take: %v, want the provider's reason", err)
	}
	t.Logf("a start no node can take: %d %s: %s", ae.StatusCode, ae.Code, ae.Message)
	if rt, err := e.c.GetRuntime(t.Context(), "acme", "dev", stuck); err != nil || rt.Status != pc.RuntimeError || rt.StatusReason == "" {
		t.Fatalf("the runtime after it = %+v (%v), want error with a reason", rt, err)
	}
	testenv.WaitFor(t, "the failed start's Pod to go", func() bool { return len(e.pods(t, provider.LabelRuntime, stuck)) == 0 })
}

// getJSON GETs url with key and decodes its 200 answer into v.
func getJSON(t testing.TB, url, key string, v any) error {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// TestKubernetesProviderUnreachable: a kubernetes provider whose cluster
// does not answer fails the server's start, naming the provider and the
// cluster; a block that is not valid fails it before any dial, naming the
// setting.
func TestKubernetesProviderUnreachable(t *testing.T) {
	bin := testenv.Binary(t, "paddock")
	dir := t.TempDir()
	port := freePort(t) // nothing listens there
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, port)), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ block, want string }{
		"unreachable": {"{kubeconfig: " + kubeconfig + ", namespace: sandboxes}", fmt.Sprintf(`provider kube: cluster_unavailable: the cluster at https://127.0.0.1:%d does not answer`, port)},
		"invalid":     {"{kubeconfig: " + kubeconfig + ", namespace: Sandboxes}", `provider "kube": kubernetes: namespace "Sandboxes"`},
	} {
		t.Run(name, func(t *testing.T) {
			config := filepath.Join(dir, name+".yaml")
			y := "provider: kube\nproviders: [{name: kube, kind: kubernetes, kubernetes: " + tc.block + "}]\n"
			if err := os.WriteFile(config, []byte(y), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "serve", "--config", config, "--data-dir", filepath.Join(dir, name), "--listen", "127.0.0.1:0")
			cmd.Env = append(os.Environ(), "PADDOCK_PROVIDERS=", "PADDOCK_PROVIDER=", "PADDOCK_SSH_LISTEN=off", "PADDOCK_EGRESS_DISABLED=true")
			ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
			defer cancel()
			out, err := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...).CombinedOutput()
			if err == nil || ctx.Err() != nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("paddock serve: %v\n%s\nwant a failed start saying %q", err, out, tc.want)
			}
		})
	}
}
