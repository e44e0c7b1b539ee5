package server

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/providers/kubernetes"
)

// TestDockerNetworksKeepEarlierOnes: with neither network named, the
// docker provider is told of the earlier releases' networks (which it
// keeps when they carry the installation's label) beside names derived
// from the instance id; naming either network turns that off, and the
// unnamed one is still derived from the instance id.
func TestDockerNetworksKeepEarlierOnes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		proxy, open string
		wantEarlier bool
	}{
		{name: "both unset", wantEarlier: true},
		{name: "proxy named", proxy: "mine-p"},
		{name: "open named", open: "mine-o"},
		{name: "both named", proxy: "mine-p", open: "mine-o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg config.Config
			cfg.Egress.ProxyNetwork, cfg.Egress.OpenNetwork, cfg.Egress.ProxyPort = tc.proxy, tc.open, 3128
			n := dockerNetworks(cfg.Egress, "inst-1")
			if got := n.Earlier != nil; got != tc.wantEarlier {
				t.Fatalf("Earlier = %+v, want set: %v", n.Earlier, tc.wantEarlier)
			}
			if tc.wantEarlier && (n.Earlier.Proxy != config.EarlierProxyNetwork || n.Earlier.Open != config.EarlierOpenNetwork) {
				t.Errorf("Earlier = %s, %s; want %s, %s", n.Earlier.Proxy, n.Earlier.Open, config.EarlierProxyNetwork, config.EarlierOpenNetwork)
			}
			for _, c := range []struct{ got, named, earlier string }{{n.Proxy, tc.proxy, config.EarlierProxyNetwork}, {n.Open, tc.open, config.EarlierOpenNetwork}} {
				switch {
				case c.named != "" && c.got != c.named:
					t.Errorf("network %q, want the named %q", c.got, c.named)
				case c.named == "" && (!strings.HasPrefix(c.got, c.earlier+"-") || len(c.got) != len(c.earlier)+13):
					t.Errorf("network %q, want %s-<12 hex digits of the instance id's hash>", c.got, c.earlier)
				}
			}
			if other := dockerNetworks(cfg.Egress, "inst-2"); tc.proxy == "" && other.Proxy == n.Proxy {
				t.Errorf("two instances share the derived proxy network %q", n.Proxy)
			}
		})
	}
	var off config.Config
	off.Egress.Disabled = true
	if n := dockerNetworks(off.Egress, "inst-1"); n != nil {
		t.Errorf("networks with egress disabled = %+v, want none", n)
	}
}

// TestKubeConfig: a kubernetes provider's block becomes the provider's
// Config as written (tolerations as Kubernetes has them, the default shim
// image when none is named), and the egress proxy's address reaches it
// only while egress is on.
func TestKubeConfig(t *testing.T) {
	seconds := int64(30)
	pc := config.ProviderConfig{Name: "kube", Kind: config.KindKubernetes, Kubernetes: &config.KubernetesProvider{
		Kubeconfig: "/etc/paddock/kubeconfig", Context: "ci", Namespace: "sandboxes",
		RuntimeClass: "gvisor", StorageClass: "fast", NodeSelector: map[string]string{"pool": "sb"},
		Tolerations:     []config.Toleration{{Key: "k", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: &seconds}},
		ImagePullPolicy: "Never", NetworkPolicies: true, AgentFrom: []string{"10.99.77.1"},
		ProxyAddress: "10.99.77.1:3128", PodCIDRs: []string{"10.244.0.0/16"}, StartTimeout: time.Minute,
	}}
	got, err := kubeConfig(pc, config.Egress{}, "inst-1")
	if err != nil {
		t.Fatal(err)
	}
	want := kubernetes.Config{
		Name: "kube", Instance: "inst-1", Kubeconfig: "/etc/paddock/kubeconfig", Context: "ci", Namespace: "sandboxes",
		RuntimeClass: "gvisor", StorageClass: "fast", NodeSelector: map[string]string{"pool": "sb"},
		Tolerations:     []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds}},
		ShimImage:       config.DefaultShimImage(),
		ImagePullPolicy: corev1.PullNever, NetworkPolicies: true,
		AgentFrom: []netip.Prefix{netip.MustParsePrefix("10.99.77.1/32")}, ProxyAddr: netip.MustParseAddrPort("10.99.77.1:3128"),
		PodCIDRs:     []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16")},
		StartTimeout: time.Minute,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("kubeConfig = %+v\nwant        %+v", got, want)
	}
	if got, err := kubeConfig(pc, config.Egress{Disabled: true}, "inst-1"); err != nil || got.ProxyAddr.IsValid() {
		t.Errorf("with egress disabled the proxy is at %v (%v), want nowhere", got.ProxyAddr, err)
	}
	pc.Kubernetes.StartTimeout = 0
	if got, err := kubeConfig(pc, config.Egress{}, "inst-1"); err != nil || got.StartTimeout != config.DefaultKubeStartTimeout {
		t.Errorf("an unset start timeout is %s (%v), want %s", got.StartTimeout, err, config.DefaultKubeStartTimeout)
	}
	if _, err := kubeConfig(config.ProviderConfig{Name: "kube", Kind: config.KindKubernetes}, config.Egress{}, "i"); err == nil {
		t.Error("a kubernetes provider without its block was made")
	}
}
