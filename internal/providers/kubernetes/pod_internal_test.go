package kubernetes

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

func testProvider(cfg Config) *Provider {
	cfg.Namespace, cfg.ShimImage = "ns", "shim:1"
	if err := checkConfig(&cfg); err != nil {
		panic(err)
	}
	return &Provider{cfg: cfg}
}

func testSpec() provider.Spec {
	return provider.Spec{
		SandboxID: "0b6f3f7e-8a57-4c53-9d43-2f3c1d1e2a10", Instance: "inst", Image: "img:1",
		Workspace: "ws-1", Network: provider.NetworkNone,
		Resources: provider.Resources{CPUMillis: 500, MemoryMB: 256, TmpMB: 1024},
		Env:       map[string]string{"B": "2", "A": "1"},
	}
}

// TestPodHardening checks every setting the brief's hardening contract
// names, on the Pod and on both containers.
func TestPodHardening(t *testing.T) {
	p := testProvider(Config{RuntimeClass: "rc", NodeSelector: map[string]string{"k": "v"}, Tolerations: []corev1.Toleration{{Key: "t", Operator: corev1.TolerationOpExists}}})
	spec := testSpec()
	pod := p.podFor(spec, podName(spec.SandboxID), map[string]string{"l": "v"})
	ps := pod.Spec
	switch {
	case ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken:
		t.Error("the service account token is mounted")
	case ps.EnableServiceLinks == nil || *ps.EnableServiceLinks:
		t.Error("service links are on")
	case ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot:
		t.Error("the Pod may run as root")
	case *ps.SecurityContext.RunAsUser != 1000 || *ps.SecurityContext.RunAsGroup != 1000 || *ps.SecurityContext.FSGroup != 1000:
		t.Error("the Pod does not run as 1000:1000 with fsGroup 1000")
	case ps.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("the Pod's seccomp profile is not RuntimeDefault")
	case ps.RestartPolicy != corev1.RestartPolicyNever:
		t.Error("the Pod restarts its agent")
	case len(ps.SchedulingGates) != 1 || ps.SchedulingGates[0].Name != startGate:
		t.Error("a created Pod is not gated")
	case ps.RuntimeClassName == nil || *ps.RuntimeClassName != "rc":
		t.Error("the runtime class is not set")
	case ps.NodeSelector["k"] != "v" || len(ps.Tolerations) != 1:
		t.Error("the node selector or tolerations are not set")
	}
	if len(ps.InitContainers) != 1 || len(ps.Containers) != 1 {
		t.Fatalf("containers: %d init, %d", len(ps.InitContainers), len(ps.Containers))
	}
	for _, c := range []corev1.Container{ps.InitContainers[0], ps.Containers[0]} {
		sc := c.SecurityContext
		switch {
		case !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
			t.Errorf("%s: capabilities %+v", c.Name, sc.Capabilities)
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Errorf("%s: privilege escalation allowed", c.Name)
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			t.Errorf("%s: writable root", c.Name)
		case *sc.RunAsUser != 1000 || sc.Privileged == nil || *sc.Privileged:
			t.Errorf("%s: runs as %d, privileged %v", c.Name, *sc.RunAsUser, sc.Privileged)
		case c.Resources.Limits.Cpu().MilliValue() != 500 || c.Resources.Limits.Memory().Value() != 256<<20:
			t.Errorf("%s: limits %v", c.Name, c.Resources.Limits)
		case !c.Resources.Requests.Cpu().Equal(*c.Resources.Limits.Cpu()) || !c.Resources.Requests.Memory().Equal(*c.Resources.Limits.Memory()):
			t.Errorf("%s: requests %v differ from limits %v", c.Name, c.Resources.Requests, c.Resources.Limits)
		}
	}
}

// TestPodLayout checks the agent's command lines, the mounts and the
// volumes the contract between the provider and the agent names.
func TestPodLayout(t *testing.T) {
	p := testProvider(Config{})
	spec := testSpec()
	name := podName(spec.SandboxID)
	pod := p.podFor(spec, name, nil)
	init, sb := pod.Spec.InitContainers[0], pod.Spec.Containers[0]
	if got := strings.Join(init.Command, " "); got != "/paddock-shim install /.paddock/bin --key-from /.paddock/key/agent.key" || init.Image != "shim:1" {
		t.Errorf("init container: %s %q", init.Image, got)
	}
	want := []string{"/.paddock/bin/paddock-shim", "serve", "--listen", ":7443", "--key-file", "/.paddock/bin/agent.key", "--run-dir", "/.paddock/run", "--user", ""}
	if !slices.Equal(sb.Command, want) || sb.Image != "img:1" {
		t.Errorf("sandbox command %q, want %q", sb.Command, want)
	}
	mounts := map[string]string{}
	for _, m := range sb.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	for path, vol := range map[string]string{"/workspace": volWorkspace, "/home/user": volWorkspace, "/tmp": volTmp, binDir: volBin, runDir: volRun} {
		if mounts[path] != vol {
			t.Errorf("sandbox mount %s = %q, want volume %q", path, mounts[path], vol)
		}
	}
	if _, ok := mounts[keyDir]; ok {
		t.Error("the agent key's Secret is mounted in the sandbox container")
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v
	}
	if c := vols[volWorkspace].PersistentVolumeClaim; c == nil || c.ClaimName != claimName(spec.Workspace) {
		t.Errorf("workspace volume %+v", vols[volWorkspace])
	}
	if e := vols[volTmp].EmptyDir; e == nil || e.Medium != corev1.StorageMediumMemory || e.SizeLimit.Value() != 64<<20 {
		t.Errorf("/tmp volume %+v, want memory of 64 MiB (a quarter of the memory)", vols[volTmp].EmptyDir)
	}
	if s := vols[volKey].Secret; s == nil || s.SecretName != secretName(name) || len(s.Items) != 1 || s.Items[0].Key != "agent.key" {
		t.Errorf("key volume %+v", vols[volKey])
	}
	env := []string{}
	for _, e := range sb.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	if !slices.Equal(env, []string{"A=1", "B=2", "HOME=/home/user"}) {
		t.Errorf("env %q", env)
	}

	spec.TrustedCA = []byte("-----BEGIN CERTIFICATE-----")
	pod = p.podFor(spec, name, nil)
	sb = pod.Spec.Containers[0]
	if got := sb.Command[len(sb.Command)-2:]; !slices.Equal(got, []string{"--trust", "/.paddock/trust/trust.pem"}) {
		t.Errorf("with a CA the agent is not given --trust: %q", sb.Command)
	}
}

func TestClaimName(t *testing.T) {
	seen := map[string]string{}
	for _, ws := range []string{"ws-1", "paddock-ws-0b6f3f7e-8a57", "WS-1", "ws_1", "Ws.1", "a..b", "ws.1", strings.Repeat("w", 255), strings.Repeat("w", 254) + "W"} {
		got := claimName(ws)
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("claimName(%q) = %q: %v", ws, got, errs)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("claimName(%q) = claimName(%q) = %q", ws, other, got)
		}
		seen[got] = ws
	}
	if got := claimName("ws-1"); got != "ws-1" {
		t.Errorf("a DNS-safe name changed: %q", got)
	}
	if got := claimName("ws_1"); got == "ws-1" || !strings.HasPrefix(got, "ws-1-") {
		t.Errorf("claimName(ws_1) = %q", got)
	}
	for _, id := range []string{"0b6f3f7e-8a57-4c53-9d43-2f3c1d1e2a10", "Sandbox_1.x", strings.Repeat("a", 128)} {
		name := podName(id)
		for _, n := range []string{name, secretName(name), policyName(name)} {
			if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
				t.Errorf("name %q for %q: %v", n, id, errs)
			}
		}
	}
}

func TestKubeLabels(t *testing.T) {
	spec := testSpec()
	spec.RuntimeID, spec.OrgID = "9b0e2a4c-0d7c-4a55-bb16-6b0b8d6f7b1e", "org-1"
	got, err := kubeLabels(provider.StandardLabels(spec, Name))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		provider.LabelManaged: "true", provider.LabelInstance: "inst", provider.LabelSandbox: spec.SandboxID,
		provider.LabelRuntime: spec.RuntimeID, provider.LabelOrg: "org-1", provider.LabelProvider: Name,
	} {
		if got[k] != want {
			t.Errorf("label %s = %q, want %q", k, got[k], want)
		}
	}
	for _, bad := range []map[string]string{
		{provider.LabelInstance: "pdktest/TestX"},
		{provider.LabelSandbox: strings.Repeat("a", 64)},
		{"bad key!": "v"},
	} {
		if _, err := kubeLabels(bad); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("kubeLabels(%v) = %v, want invalid argument", bad, err)
		}
	}
}

// TestPolicies checks each network mode's NetworkPolicy.
func TestPolicies(t *testing.T) {
	p := testProvider(Config{NetworkPolicies: true, ProxyAddr: netip.MustParseAddrPort("10.0.0.1:3128"), AgentFrom: []netip.Prefix{netip.MustParsePrefix("10.9.0.7/32")},
		DenyCIDRs: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12"), netip.MustParsePrefix("169.254.169.254/32")}})
	for _, tc := range []struct {
		mode  provider.NetworkPolicy
		check func(t *testing.T, eg []networkingv1.NetworkPolicyEgressRule)
	}{
		{provider.NetworkNone, func(t *testing.T, eg []networkingv1.NetworkPolicyEgressRule) {
			if len(eg) != 0 {
				t.Errorf("none allows egress: %+v", eg)
			}
		}},
		{provider.NetworkProxy, func(t *testing.T, eg []networkingv1.NetworkPolicyEgressRule) {
			if len(eg) != 1 || len(eg[0].To) != 1 || eg[0].To[0].IPBlock.CIDR != "10.0.0.1/32" || len(eg[0].Ports) != 1 || eg[0].Ports[0].Port.IntVal != 3128 {
				t.Errorf("proxy egress %+v", eg)
			}
		}},
		{provider.NetworkOpen, func(t *testing.T, eg []networkingv1.NetworkPolicyEgressRule) {
			if len(eg) != 1 || eg[0].To[0].IPBlock.CIDR != "0.0.0.0/0" || !slices.Equal(eg[0].To[0].IPBlock.Except, []string{"169.254.0.0/16", "10.9.0.7/32", "10.96.0.0/12", "10.0.0.1/32"}) {
				t.Errorf("open egress %+v", eg)
			}
		}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			np := p.policyFor(tc.mode, "pdk-x", "sb-1", nil)
			if np.Spec.PodSelector.MatchLabels[provider.LabelSandbox] != "sb-1" {
				t.Errorf("selector %v", np.Spec.PodSelector)
			}
			if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
				t.Errorf("policy types %v", np.Spec.PolicyTypes)
			}
			in := np.Spec.Ingress
			if len(in) != 1 || len(in[0].Ports) != 1 || in[0].Ports[0].Port.IntVal != AgentPort || len(in[0].From) != 1 || in[0].From[0].IPBlock.CIDR != "10.9.0.7/32" {
				t.Errorf("ingress %+v", in)
			}
			tc.check(t, np.Spec.Egress)
		})
	}
}

// TestOfferedNetworks: without NetworkPolicies only open is offered, and
// Create refuses the others before it makes anything.
func TestOfferedNetworks(t *testing.T) {
	proxy := netip.MustParseAddrPort("10.0.0.1:3128")
	for _, tc := range []struct {
		cfg  Config
		want []provider.NetworkPolicy
	}{
		{Config{}, []provider.NetworkPolicy{provider.NetworkOpen}},
		{Config{ProxyAddr: proxy}, []provider.NetworkPolicy{provider.NetworkOpen}},
		{Config{NetworkPolicies: true}, []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkOpen}},
		{Config{NetworkPolicies: true, ProxyAddr: proxy}, []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen}},
	} {
		p := testProvider(tc.cfg)
		if got := p.Capabilities().Networks; !slices.Equal(got, tc.want) {
			t.Errorf("%+v: networks %v, want %v", tc.cfg, got, tc.want)
		}
		for _, n := range []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy} {
			spec := testSpec()
			spec.Network = n
			_, err := p.validateSpec(&spec)
			if slices.Contains(tc.want, n) != (err == nil) {
				t.Errorf("%+v: network %s: %v", tc.cfg, n, err)
			}
			if err != nil && !errors.Is(err, errdefs.ErrNotImplemented) {
				t.Errorf("%+v: network %s: %v, want not implemented", tc.cfg, n, err)
			}
		}
	}
	if c := testProvider(Config{}).Capabilities(); c.Pause || c.Snapshot || !c.Agent {
		t.Errorf("capabilities %+v", c)
	}
}

func TestValidateSpec(t *testing.T) {
	p := testProvider(Config{NetworkPolicies: true})
	for name, mutate := range map[string]func(*provider.Spec){
		"root":          func(s *provider.Spec) { s.User = provider.UserRoot },
		"label value":   func(s *provider.Spec) { s.Labels = map[string]string{"x": "a/b"} },
		"long instance": func(s *provider.Spec) { s.Instance = strings.Repeat("i", 64) },
	} {
		spec := testSpec()
		mutate(&spec)
		if _, err := p.validateSpec(&spec); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%s: %v, want invalid argument", name, err)
		}
	}
	spec := testSpec()
	spec.WritableRoot = true
	if _, err := p.validateSpec(&spec); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("writable root: %v", err)
	}
}

func TestDecodeHandle(t *testing.T) {
	p := testProvider(Config{})
	good := handleState{V: stateVersion, Pod: "pdk-a", UID: "u", Key: strings.Repeat("ab", 32)}
	for name, h := range map[string]provider.Handle{
		"other provider": {Provider: "docker", ID: "pdk-a"},
		"path":           {Provider: Name, ID: "../../etc/passwd"},
		"empty":          {},
		"garbage state":  {Provider: Name, ID: "pdk-a", State: []byte("{not json")},
		"future state":   {Provider: Name, ID: "pdk-a", State: []byte(`{"v":999}`)},
		"other pod":      {Provider: Name, ID: "pdk-b", State: good.encode()},
		"bad key":        {Provider: Name, ID: "pdk-a", State: []byte(`{"v":1,"key":"zz"}`)},
	} {
		if _, err := p.decodeHandle(h); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%s: %v, want invalid argument", name, err)
		}
	}
	st, err := p.decodeHandle(provider.Handle{Provider: Name, ID: "pdk-a", State: good.encode()})
	if err != nil || st != good {
		t.Errorf("decode = %+v, %v", st, err)
	}
}

// TestPodOvercommit: with an overcommit of 4 the scheduler reserves a
// quarter of a sandbox's limits, which stay whole; the default reserves
// all of it; an overcommit past the largest is refused. The agent's copy
// is in memory, not on the node's disk.
func TestPodOvercommit(t *testing.T) {
	res := func(p *Provider) corev1.ResourceRequirements {
		return p.podFor(testSpec(), "p", nil).Spec.Containers[0].Resources
	}
	r := res(testProvider(Config{Overcommit: 4}))
	if r.Requests.Cpu().MilliValue() != 125 || r.Requests.Memory().Value() != 64<<20 ||
		r.Limits.Cpu().MilliValue() != 500 || r.Limits.Memory().Value() != 256<<20 {
		t.Errorf("overcommit 4: requests %v, limits %v; want 125m/64Mi of 500m/256Mi", r.Requests, r.Limits)
	}
	if r := res(testProvider(Config{})); !r.Requests.Cpu().Equal(*r.Limits.Cpu()) || !r.Requests.Memory().Equal(*r.Limits.Memory()) {
		t.Errorf("no overcommit: requests %v, limits %v; want them equal", r.Requests, r.Limits)
	}
	cfg := Config{Namespace: "ns", ShimImage: "s", Overcommit: MaxOvercommit + 1}
	if err := checkConfig(&cfg); err == nil {
		t.Errorf("overcommit %d was taken", cfg.Overcommit)
	}
	for _, v := range testProvider(Config{}).podFor(testSpec(), "p", nil).Spec.Volumes {
		if v.Name == volBin && (v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory) {
			t.Errorf("the agent's directory is %+v, want in memory", v.VolumeSource)
		}
	}
}
