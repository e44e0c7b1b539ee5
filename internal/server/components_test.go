package server

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/provider"
)

// TestComponentOrder: the server's components form a graph without a
// cycle or a missing requirement, and initialise in this order: the
// store first, the HTTP API last, so that it stops taking requests
// before anything it serves closes (they close in reverse).
func TestComponentOrder(t *testing.T) {
	got, err := ComponentNames()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"store", "access", "metrics", "providers", "secrets", "hosts", "egress", "preview", "runtime", "ledger",
		"bindings", "sessions", "snapshots", "tasks", "worlds", "workflows", "template_builds", "host-teardown", "lifecycle", "ssh", "events", "instance", "http",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// TestMountedFeaturesTestsReplace: a feature a test mounts takes the
// place of a component's of the same name (mounting both would panic),
// and the others are mounted besides.
func TestMountedFeaturesTestsReplace(t *testing.T) {
	w := &wiring{o: Overrides{Mount: []api.Feature{api.Metrics(metrics.New()), api.SSH(nil)}}}
	w.mount(api.Credits(nil))
	w.mount(api.Metrics(metrics.New()))
	var names []string
	for _, f := range w.mountedFeatures() {
		names = append(names, f.Name)
	}
	if want := []string{"credits", "metrics", "ssh"}; !slices.Equal(names, want) {
		t.Fatalf("mounted %v, want %v", names, want)
	}
	// Instance mode's feature is mounted last, after a test's too: its
	// routes mirror the runtime routes of the others (the SSH one here).
	w.mount(api.Instance(nil))
	names = nil
	for _, f := range w.mountedFeatures() {
		names = append(names, f.Name)
	}
	if want := []string{"credits", "metrics", "ssh", "instance"}; !slices.Equal(names, want) {
		t.Fatalf("mounted %v, want %v", names, want)
	}
}

// TestOneAccessService: the SSH gateway asks the access service the API
// asks, the access component's; and with the gateway off, its component
// has no instance (nil, not a nil *sshServer).
func TestOneAccessService(t *testing.T) {
	for _, sshListen := range []string{"127.0.0.1:0", "off"} {
		cfg, f, ln := failingConfig(t)
		cfg.SSHListen = sshListen
		s, err := Build(t.Context(), cfg, slog.New(slog.DiscardHandler), io.Discard,
			Overrides{Listener: ln, Providers: []provider.Provider{f}, Manual: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		gw := s.set.Get(sshName)
		if sshListen == "off" {
			if gw != nil {
				t.Fatalf("the ssh component when off: %#v, want nil", gw)
			}
			continue
		}
		if acc := gw.(*sshServer).cfg.Access; acc == nil || acc != s.Access() || s.http.access.svc != acc {
			t.Fatalf("the SSH gateway asks %p, the API %p", acc, s.Access())
		}
	}
}

// TestEachComponentHasItsSection: every component's configuration
// section is its name and one of the configuration's sections.
func TestEachComponentHasItsSection(t *testing.T) {
	for _, r := range (&wiring{}).components() {
		if r.Section != r.Name || !slices.Contains(config.SectionNames(), r.Section) {
			t.Errorf("component %s has section %q, not one of %v", r.Name, r.Section, config.SectionNames())
		}
	}
}

// TestInitsReadTheirSection: the server's components are given their
// sections by name, each once, in the order they initialise, and what
// they are made from is what their section says: a section changed on
// the way (the store's instance id, the access section's first admin
// key, the sessions' default harness) is what the component uses.
func TestInitsReadTheirSection(t *testing.T) {
	cfg, f, ln := failingConfig(t)
	d, err := openDoorsFor(cfg, Overrides{Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	w := newWiring(cfg, slog.New(slog.DiscardHandler), &out, d, Overrides{Listener: ln, Providers: []provider.Provider{f}, Manual: true})
	var asked []string
	w.sections = func(name string) any {
		asked = append(asked, name)
		switch sec := cfg.Section(name).(type) {
		case *config.StoreConfig:
			changed := *sec
			changed.InstanceID = "from-the-section"
			return &changed
		case *config.AccessConfig:
			changed := *sec
			changed.BootstrapKey = "pdk_" + strings.Repeat("0a", 24)
			return &changed
		default:
			return sec
		}
	}
	s, err := w.build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	if want, _ := ComponentNames(); !slices.Equal(asked, want) {
		t.Fatalf("sections asked for %v, want each component's, %v", asked, want)
	}
	if s.Instance() != "from-the-section" {
		t.Fatalf("instance %q, not the store section's", s.Instance())
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "from the configured bootstrap key") {
		t.Fatalf("the first admin key printed is not the access section's: %q", out.String())
	}

	cfg2, _, ln2 := failingConfig(t)
	d2, err := openDoorsFor(cfg2, Overrides{Listener: ln2})
	if err != nil {
		t.Fatal(err)
	}
	w2 := newWiring(cfg2, slog.New(slog.DiscardHandler), io.Discard, d2, Overrides{Listener: ln2, Providers: []provider.Provider{f}, Manual: true})
	w2.sections = func(name string) any {
		if name == sessionsName {
			return &config.SessionsConfig{DefaultHarness: "no-such-harness"}
		}
		return cfg2.Section(name)
	}
	if _, err := w2.build(t.Context()); err == nil || !strings.Contains(err.Error(), "no-such-harness") {
		t.Fatalf("a sessions section naming an unknown harness built: %v", err)
	}

	// A snapshot bucket on loopback, not allowed: the server does not
	// start, and says why (nothing is dialled).
	cfg3, _, ln3 := failingConfig(t)
	d3, err := openDoorsFor(cfg3, Overrides{Listener: ln3})
	if err != nil {
		t.Fatal(err)
	}
	w3 := newWiring(cfg3, slog.New(slog.DiscardHandler), io.Discard, d3, Overrides{Listener: ln3, Providers: []provider.Provider{f}, Manual: true})
	w3.sections = func(name string) any {
		if name == snapshotsName {
			return &config.SnapshotsConfig{SnapshotsS3Endpoint: "http://127.0.0.1:9", SnapshotsS3Bucket: "b"}
		}
		return cfg3.Section(name)
	}
	if _, err := w3.build(t.Context()); err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "snapshots_s3_allow_internal") {
		t.Fatalf("a snapshot bucket on loopback built: %v", err)
	}
}

// TestSnapshotBucketCredentialsSection: the snapshot bucket's
// credentials from the org's secrets take both names, and no keys of the
// installation's beside them; otherwise the server does not start, and
// says why.
func TestSnapshotBucketCredentialsSection(t *testing.T) {
	for _, c := range []struct {
		sec  config.SnapshotsConfig
		want string
	}{
		{config.SnapshotsConfig{SnapshotsS3AccessKeySecret: "ak"}, "set both"},
		{config.SnapshotsConfig{SnapshotsS3AccessKeySecret: "ak", SnapshotsS3SecretKeySecret: "sk", SnapshotsS3AccessKey: "k"}, "not both"},
	} {
		cfg4, f, ln4 := failingConfig(t)
		d4, err := openDoorsFor(cfg4, Overrides{Listener: ln4})
		if err != nil {
			t.Fatal(err)
		}
		w4 := newWiring(cfg4, slog.New(slog.DiscardHandler), io.Discard, d4, Overrides{Listener: ln4, Providers: []provider.Provider{f}, Manual: true})
		w4.sections = func(name string) any {
			if name == snapshotsName {
				sec := c.sec
				sec.SnapshotsS3Endpoint, sec.SnapshotsS3Bucket, sec.SnapshotsS3AllowInternal = "http://127.0.0.1:9", "b", true
				return &sec
			}
			return cfg4.Section(name)
		}
		if _, err := w4.build(t.Context()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("snapshot bucket credentials %+v built: %v", c.sec, err)
		}
	}
}

// TestGatewayAndBuildsHaveTheirOwnLifetime: the SSH gateway starts and
// closes as its own component, and the image builds as the providers
// component's, not as the HTTP component's; the HTTP component requires
// the gateway, so it drains first, and the gateway requires the store,
// so it stops before the store closes.
func TestGatewayAndBuildsHaveTheirOwnLifetime(t *testing.T) {
	regs := map[string]component.Registration{}
	for _, r := range (&wiring{}).components() {
		regs[r.Name] = r
	}
	if r := regs[sshName]; r.Start == nil || r.Close == nil {
		t.Fatal("the ssh component has no Start or Close of its own")
	}
	if r := regs[providersName]; r.Start == nil || r.Close == nil {
		t.Fatal("the providers component does not start and close the image builds")
	}
	if !slices.Contains(regs[httpName].Requires, sshName) || !slices.Contains(regs[sshName].Requires, storeName) {
		t.Fatalf("http requires %v, ssh %v: the drain, the gateway and the store close out of order",
			regs[httpName].Requires, regs[sshName].Requires)
	}
}
