package config

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestKubernetesProviderFile: a kubernetes provider's block is read from
// the file with every setting, validated, its kubeconfig made absolute,
// its addresses parsed, and its shim image defaulted to this build's.
func TestKubernetesProviderFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	file := filepath.Join(dir, "paddock.yaml")
	if err := os.WriteFile(file, []byte(`
provider: kube
providers:
  - name: kube
    kind: kubernetes
    kubernetes:
      kubeconfig: admin.kubeconfig
      context: ci
      namespace: sandboxes
      runtime_class: gvisor
      storage_class: fast-ssd
      node_selector: {pool: sandboxes, kubernetes.io/os: linux}
      tolerations:
        - {key: dedicated, operator: Equal, value: sandboxes, effect: NoSchedule}
        - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, toleration_seconds: 30}
      image_pull_policy: Never
      network_policies: true
      agent_from: [10.99.77.1, 10.0.0.0/8]
      proxy_address: 10.99.77.1:3128
      pod_cidrs: [10.244.0.0/16]
      start_timeout: 90s
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Default()
	if err := c.LoadFile(file, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("a valid kubernetes provider refused: %v", err)
	}
	if len(c.Providers) != 1 || c.Providers[0].Kind != KindKubernetes || c.Providers[0].Kubernetes == nil {
		t.Fatalf("providers = %+v, want one of kind kubernetes with its block", c.Providers)
	}
	k := *c.Providers[0].Kubernetes
	thirty := int64(30)
	want := KubernetesProvider{
		Kubeconfig: filepath.Join(dir, "admin.kubeconfig"), Context: "ci", Namespace: "sandboxes",
		RuntimeClass: "gvisor", StorageClass: "fast-ssd",
		NodeSelector: map[string]string{"pool": "sandboxes", "kubernetes.io/os": "linux"},
		Tolerations: []Toleration{
			{Key: "dedicated", Operator: "Equal", Value: "sandboxes", Effect: "NoSchedule"},
			{Key: "node.kubernetes.io/unreachable", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: &thirty},
		},
		ImagePullPolicy: "Never", NetworkPolicies: true,
		AgentFrom: []string{"10.99.77.1", "10.0.0.0/8"}, ProxyAddress: "10.99.77.1:3128", PodCIDRs: []string{"10.244.0.0/16"}, StartTimeout: 90 * time.Second,
	}
	if !reflect.DeepEqual(k, want) {
		t.Fatalf("block = %+v\nwant    %+v", k, want)
	}
	from, err := k.AgentFromPrefixes()
	if err != nil || !reflect.DeepEqual(from, []netip.Prefix{netip.MustParsePrefix("10.99.77.1/32"), netip.MustParsePrefix("10.0.0.0/8")}) {
		t.Errorf("agent_from = %v, %v", from, err)
	}
	if ap, err := k.ProxyAddrPort(); err != nil || ap != netip.MustParseAddrPort("10.99.77.1:3128") {
		t.Errorf("proxy_address = %v, %v", ap, err)
	}
	if p, err := k.PodCIDRPrefixes(); err != nil || !reflect.DeepEqual(p, []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16")}) {
		t.Errorf("pod_cidrs = %v, %v", p, err)
	}
	if got := k.ShimImageOrDefault(); got != DefaultShimImage() || !strings.HasPrefix(got, "paddock/shim:") {
		t.Errorf("the default shim image is %q, want %q", got, DefaultShimImage())
	}
	if k.StartTimeoutOrDefault() != 90*time.Second || (KubernetesProvider{}).StartTimeoutOrDefault() != DefaultKubeStartTimeout {
		t.Errorf("start timeout %s, unset %s", k.StartTimeoutOrDefault(), (KubernetesProvider{}).StartTimeoutOrDefault())
	}
	if k.ShimImage = "registry.example/paddock/shim:1"; k.ShimImageOrDefault() != k.ShimImage {
		t.Errorf("a named shim image is not used: %q", k.ShimImageOrDefault())
	}
	// A misspelt key is an error, as everywhere in the file.
	if err := os.WriteFile(file, []byte("providers: [{name: k, kind: kubernetes, kubernetes: {namespace: a, storageclass: x}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := Default(); c.LoadFile(file, true) == nil {
		t.Error("an unknown key in the kubernetes block was accepted")
	} else if err := c.LoadFile(file, true); err == nil || !strings.Contains(err.Error(), "storageclass") {
		t.Errorf("an unknown key in the kubernetes block: %v", err)
	}
}

// TestKubernetesProviderEnv: PADDOCK_PROVIDERS names a kubernetes
// provider as name=kubernetes:namespace, and writes it back so; without
// a namespace it is refused.
func TestKubernetesProviderEnv(t *testing.T) {
	c := Default()
	env := map[string]string{"PADDOCK_PROVIDERS": "docker,kube=kubernetes:sandboxes", "PADDOCK_PROVIDER": "kube"}
	if err := c.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("valid providers refused: %v", err)
	}
	kube := c.Providers[1]
	if kube.Name != "kube" || kube.Kind != KindKubernetes || kube.Runtime != "" || kube.Kubernetes == nil ||
		kube.Kubernetes.Namespace != "sandboxes" || kube.Kubernetes.Kubeconfig != "" {
		t.Fatalf("kube = %+v (%+v), want namespace sandboxes on the in-cluster config", kube, kube.Kubernetes)
	}
	for _, s := range Settings() {
		if s.Env == "PADDOCK_PROVIDERS" {
			if got := s.Format(&c); got != "docker=docker,kube=kubernetes:sandboxes" {
				t.Errorf("PADDOCK_PROVIDERS written back as %q", got)
			}
		}
	}
	ps, err := ParseProviders("kube=kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	c = Default()
	c.Provider, c.Providers = "kube", ps
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `provider "kube": kubernetes: namespace is required`) {
		t.Errorf("a kubernetes provider without a namespace: %v", err)
	}
}

// TestKubernetesProviderValidate: each bad setting of the block, or the
// block where it does not belong, is refused with an error naming the
// provider and the setting.
func TestKubernetesProviderValidate(t *testing.T) {
	seconds := int64(5)
	for want, set := range map[string]func(p *ProviderConfig){
		"needs its kubernetes block":           func(p *ProviderConfig) { p.Kubernetes = nil },
		"kubernetes block is for kubernetes":   func(p *ProviderConfig) { p.Kind = "fake" },
		"runtime and docker_host are for dock": func(p *ProviderConfig) { p.Runtime = "runsc" },
		"no_pause and no_snapshot are for":     func(p *ProviderConfig) { p.NoPause = true },
		`namespace "Sandboxes"`:                func(p *ProviderConfig) { p.Kubernetes.Namespace = "Sandboxes" },
		`runtime_class "g visor"`:              func(p *ProviderConfig) { p.Kubernetes.RuntimeClass = "g visor" },
		`storage_class "-fast"`:                func(p *ProviderConfig) { p.Kubernetes.StorageClass = "-fast" },
		`node_selector key "a b"`:              func(p *ProviderConfig) { p.Kubernetes.NodeSelector = map[string]string{"a b": "c"} },
		`node_selector pool value "x y"`:       func(p *ProviderConfig) { p.Kubernetes.NodeSelector = map[string]string{"pool": "x y"} },
		`tolerations[0]: operator "In"`:        func(p *ProviderConfig) { p.Kubernetes.Tolerations = []Toleration{{Key: "a", Operator: "In"}} },
		"tolerations[0]: operator Exists takes no value": func(p *ProviderConfig) {
			p.Kubernetes.Tolerations = []Toleration{{Key: "a", Operator: "Exists", Value: "b"}}
		},
		"tolerations[0]: operator Equal needs a key": func(p *ProviderConfig) { p.Kubernetes.Tolerations = []Toleration{{Value: "b"}} },
		`tolerations[1]: effect "Never"`: func(p *ProviderConfig) {
			p.Kubernetes.Tolerations = []Toleration{{Operator: "Exists"}, {Key: "a", Effect: "Never"}}
		},
		"toleration_seconds goes only with effect NoExecute": func(p *ProviderConfig) {
			p.Kubernetes.Tolerations = []Toleration{{Key: "a", Effect: "NoSchedule", TolerationSeconds: &seconds}}
		},
		`shim_image "a b"`:                 func(p *ProviderConfig) { p.Kubernetes.ShimImage = "a b" },
		`image_pull_policy "never"`:        func(p *ProviderConfig) { p.Kubernetes.ImagePullPolicy = "never" },
		`agent_from "10.0.0.0/33"`:         func(p *ProviderConfig) { p.Kubernetes.AgentFrom = []string{"10.0.0.0/33"} },
		`proxy_address "10.0.0.1"`:         func(p *ProviderConfig) { p.Kubernetes.ProxyAddress = "10.0.0.1" },
		`proxy_address "0.0.0.0:3128"`:     func(p *ProviderConfig) { p.Kubernetes.ProxyAddress = "0.0.0.0:3128" },
		`proxy_address "[fd00::1]:3128"`:   func(p *ProviderConfig) { p.Kubernetes.ProxyAddress = "[fd00::1]:3128" },
		`pod_cidrs "10.244.0.0"`:           func(p *ProviderConfig) { p.Kubernetes.PodCIDRs = []string{"10.244.0.0"} },
		"start_timeout 1s is neither 0":    func(p *ProviderConfig) { p.Kubernetes.StartTimeout = time.Second },
		"overcommit 101 is not between":    func(p *ProviderConfig) { p.Kubernetes.Overcommit = 101 },
		`deny_cidrs "10.0.0.0/8x"`:         func(p *ProviderConfig) { p.Kubernetes.DenyCIDRs = []string{"10.0.0.0/8x"} },
		"api_qps -1 and api_burst 0":       func(p *ProviderConfig) { p.Kubernetes.APIQPS = -1 },
		"start_timeout 2m0s is neither 0":  func(p *ProviderConfig) { p.Kubernetes.StartTimeout = 2 * time.Minute },
		`kind "k8s" is not one of docker,`: func(p *ProviderConfig) { p.Kind = "k8s" },
	} {
		c := Default()
		p := ProviderConfig{Name: "kube", Kind: KindKubernetes, Kubernetes: &KubernetesProvider{Namespace: "sandboxes"}}
		set(&p)
		c.Provider, c.Providers = "kube", []ProviderConfig{p}
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `provider "kube"`) {
			t.Errorf("%s: %v", want, err)
		}
	}
	c := Default()
	c.Provider = KindKubernetes // the single provider, by its kind: it has no block
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "needs its kubernetes block") {
		t.Errorf("provider: kubernetes alone: %v", err)
	}
}
