package kubernetes

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Provider places sandboxes on a Kubernetes cluster as Pods. It is safe
// for concurrent use.
type Provider struct {
	cfg    Config
	cs     kubernetes.Interface
	logger *slog.Logger

	// One Pod informer, on the Pods this provider made (its provider
	// label), feeds Start's and Destroy's waits and DialAgent's Pod IPs.
	factory informers.SharedInformerFactory
	pods    corelisters.PodNamespaceLister
	changes *notifier
	stop    chan struct{}
	closed  sync.Once
}

var (
	_ provider.Provider         = (*Provider)(nil)
	_ provider.Lister           = (*Provider)(nil)
	_ provider.WorkspaceRemover = (*Provider)(nil)
	_ provider.Relabeler        = (*Provider)(nil)
	_ provider.AgentLogger      = (*Provider)(nil)
	_ provider.Networker        = (*Provider)(nil)
	_ provider.NetworkAddresser = (*Provider)(nil)
)

// Codes of the configuration's errors.
const (
	CodeInvalidConfig       = "invalid_provider_config"
	CodeClusterUnavailable  = "cluster_unavailable"
	CodeNamespaceNotFound   = "namespace_not_found"
	CodeClusterUnauthorized = "cluster_unauthorized"
)

// New checks cfg, checks that the cluster answers and that the namespace
// exists, and starts the provider's Pod informer. Close stops it.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Provider, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	rc, err := restConfig(cfg)
	if err != nil {
		return nil, errdefs.InvalidArgument(CodeInvalidConfig, "the kubernetes provider's client configuration cannot be loaded").WithCause(err)
	}
	rc.QPS, rc.Burst = cfg.QPS, cfg.Burst
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, errdefs.InvalidArgument(CodeInvalidConfig, "the kubernetes provider's client configuration is not valid").WithCause(err)
	}
	if err := checkCluster(ctx, cs, cfg.Namespace, rc.Host); err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg, cs: cs, logger: logger, stop: make(chan struct{}), changes: newNotifier()}
	if err := p.startInformer(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// checkConfig checks cfg and fills its defaults.
func checkConfig(cfg *Config) error {
	bad := func(format string, args ...any) error {
		return errdefs.InvalidArgument(CodeInvalidConfig, format, args...)
	}
	if cfg.Name == "" {
		cfg.Name = Name
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.ImagePullPolicy == "" {
		cfg.ImagePullPolicy = corev1.PullIfNotPresent
	}
	cfg.Overcommit = max(cfg.Overcommit, 1)
	if cfg.QPS <= 0 {
		cfg.QPS = DefaultQPS
	}
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultBurst
	}
	switch {
	case cfg.Overcommit > MaxOvercommit:
		return bad("overcommit %d is more than %d", cfg.Overcommit, MaxOvercommit)
	case cfg.Namespace == "":
		return bad("the kubernetes provider needs a namespace")
	case cfg.ShimImage == "":
		return bad("the kubernetes provider needs the image that holds paddock-shim (shim_image)")
	case !slices.Contains([]corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}, cfg.ImagePullPolicy):
		return bad("image pull policy %q is not one of Always, IfNotPresent, Never", cfg.ImagePullPolicy)
	case cfg.ProxyAddr.IsValid() && !cfg.ProxyAddr.Addr().Is4():
		return bad("the egress proxy address %s is not an IPv4 address", cfg.ProxyAddr)
	}
	if cfg.Instance != "" {
		if _, err := kubeLabels(map[string]string{provider.LabelInstance: cfg.Instance}); err != nil {
			return err
		}
	}
	return nil
}

// checkCluster checks that the cluster answers and the namespace exists.
// A service account that may not read namespaces proves the namespace by
// listing its Pods.
func checkCluster(ctx context.Context, cs kubernetes.Interface, ns, host string) error {
	_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsForbidden(err) {
		_, err = cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	}
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return errdefs.FailedPrecondition(CodeNamespaceNotFound, "namespace %q does not exist on the cluster at %s", ns, host).WithCause(err)
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err):
		return errdefs.FailedPrecondition(CodeClusterUnauthorized, "the cluster at %s refused paddock's credentials for namespace %q", host, ns).WithCause(err)
	case ctx.Err() != nil:
		return fmt.Errorf("kubernetes: reaching the cluster: %w", ctx.Err())
	}
	return errdefs.Unavailable(CodeClusterUnavailable, "the cluster at %s does not answer", host).WithCause(err)
}

// startInformer starts the Pod informer and waits for its first list.
func (p *Provider) startInformer(ctx context.Context) error {
	sel := labels.SelectorFromSet(labels.Set{
		provider.LabelManaged:  "true",
		provider.LabelProvider: p.Name(),
	}).String()
	p.factory = informers.NewSharedInformerFactoryWithOptions(p.cs, 0,
		informers.WithNamespace(p.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
	inf := p.factory.Core().V1().Pods()
	notify := func(any) { p.changes.notify() }
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, n any) { notify(n) },
		DeleteFunc: notify,
	}); err != nil {
		return fmt.Errorf("kubernetes: pod informer: %w", err)
	}
	p.pods = inf.Lister().Pods(p.cfg.Namespace)
	p.factory.Start(p.stop)
	for typ, ok := range p.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return errdefs.Unavailable(CodeClusterUnavailable, "the cluster's Pods could not be listed (%v)", typ).WithCause(ctx.Err())
		}
	}
	return nil
}

// Close stops the Pod informer. Sandboxes keep running.
func (p *Provider) Close() error {
	p.closed.Do(func() {
		close(p.stop)
		if p.factory != nil {
			p.factory.Shutdown()
		}
	})
	return nil
}

// Ping checks that the cluster answers and the namespace is there, for
// readiness probes.
func (p *Provider) Ping(ctx context.Context) error {
	host := ""
	if rc, err := restConfig(p.cfg); err == nil {
		host = rc.Host
	}
	return checkCluster(ctx, p.cs, p.cfg.Namespace, host)
}

// Name returns the provider's registry name.
func (p *Provider) Name() string { return p.cfg.Name }

// Capabilities declares container isolation (gVisor when the RuntimeClass
// names it), no pause, the agent, no snapshots, and the network modes the
// cluster can enforce: only open without NetworkPolicies, and proxy only
// with an egress proxy address.
func (p *Provider) Capabilities() provider.Capabilities {
	iso := "container"
	if rc := strings.ToLower(p.cfg.RuntimeClass); strings.Contains(rc, "gvisor") || strings.Contains(rc, "runsc") {
		iso = "gvisor"
	}
	return provider.Capabilities{
		Isolation: iso,
		Pause:     false,
		Agent:     true,
		Networks:  p.offeredNetworks(),
		Snapshot:  false,
	}
}

// offeredNetworks are the network modes Create accepts.
func (p *Provider) offeredNetworks() []provider.NetworkPolicy {
	if !p.cfg.NetworkPolicies {
		return []provider.NetworkPolicy{provider.NetworkOpen}
	}
	if p.cfg.ProxyAddr.IsValid() {
		return []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy, provider.NetworkOpen}
	}
	return []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkOpen}
}

// notifier tells waiters that the informer saw a change: wait returns a
// channel closed at the next change.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func newNotifier() *notifier { return &notifier{ch: make(chan struct{})} }

func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

func (n *notifier) notify() {
	n.mu.Lock()
	close(n.ch)
	n.ch = make(chan struct{})
	n.mu.Unlock()
}
