package kubernetes_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/provider/providertest"
	"github.com/paddockhq/paddock/internal/providers/kubernetes"
)

// TestConformance runs the provider conformance suite on the test
// cluster. The provider declares Pause: false (the suite then checks that
// Pause and Resume are not implemented, whatever the handle, and skips the
// paused transitions) and Snapshot: false (the snapshot tests skip: an
// archived runtime keeps its workspace claim, not a root filesystem).
func TestConformance(t *testing.T) {
	k := kubeCluster(t)
	instance := "pdk" + randHex(6)
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) provider.Provider {
			return newEnvOn(t, k, func(c *kubernetes.Config) { c.Instance = instance }).p
		},
		Spec: func(t *testing.T) provider.Spec {
			return provider.Spec{
				SandboxID: uuid.NewString(),
				Instance:  instance,
				Image:     k.Image,
				Workspace: "ws-" + uuid.NewString(),
				Resources: provider.Resources{CPUMillis: 200, MemoryMB: 128, DiskMB: 64},
			}
		},
		WorkspaceExists: func(t *testing.T, p provider.Provider, name string) bool {
			e := &env{k: k}
			return e.exists(t, "pvc", name)
		},
		CallTimeout: 3 * time.Minute,
	})
}

// TestHardening checks, from inside a running sandbox, that the Pod's
// hardening holds: the agent and what it runs are uid 1000 with no
// capabilities, the root filesystem is read-only, no service account
// token is mounted, and /tmp and the workspace are writable.
func TestHardening(t *testing.T) {
	e := newEnv(t, nil)
	h := e.started(t, e.spec())
	for _, tc := range []struct {
		argv []string
		want string
		code int
	}{
		{[]string{"id", "-u"}, "1000", 0},
		{[]string{"id", "-g"}, "1000", 0},
		{[]string{"sh", "-c", "grep CapEff /proc/self/status; grep CapEff /proc/1/status"}, "CapEff:\t0000000000000000\nCapEff:\t0000000000000000", 0},
		{[]string{"sh", "-c", "grep NoNewPrivs /proc/1/status"}, "NoNewPrivs:\t1", 0},
		{[]string{"sh", "-c", "grep Seccomp: /proc/1/status"}, "Seccomp:\t2", 0},
		{[]string{"sh", "-c", "touch /etc/x 2>&1 || echo refused"}, "refused", 0},
		{[]string{"sh", "-c", "ls /var/run/secrets/kubernetes.io 2>&1 || echo none"}, "none", 0},
		{[]string{"sh", "-c", "echo ok > /tmp/x && echo ok > /workspace/x && cat /tmp/x /home/user/x"}, "ok\nok", 0},
	} {
		out, code := e.run(t, h, tc.argv...)
		if !strings.Contains(out, tc.want) || code != tc.code {
			t.Errorf("%q: %q (exit %d), want %q (exit %d)", tc.argv, out, code, tc.want, tc.code)
		}
	}
}

// TestReconcileMaterial: List finds a sandbox's Pod with its labels;
// Destroy leaves no Pod, Secret or NetworkPolicy; the workspace claim is
// kept until RemoveWorkspace.
func TestReconcileMaterial(t *testing.T) {
	e := newEnv(t, nil)
	spec := e.spec()
	spec.RuntimeID, spec.OrgID = uuid.NewString(), uuid.NewString()
	h := e.started(t, spec)
	got, err := e.p.List(e.ctx(t), e.cfg.Instance)
	if err != nil || len(got) != 1 || got[0].Handle.ID != h.ID || got[0].Status.State != provider.StateRunning {
		t.Fatalf("List = %+v, %v", got, err)
	}
	if l := got[0].Labels; l[provider.LabelRuntime] != spec.RuntimeID || l[provider.LabelOrg] != spec.OrgID || l[provider.LabelSandbox] != spec.SandboxID {
		t.Fatalf("listed labels %v", l)
	}
	// A listed handle has no key in it: the agent is reached with the
	// Pod's Secret's.
	if out, code := e.run(t, got[0].Handle, "echo", "hi"); out != "hi" || code != 0 {
		t.Fatalf("through a listed handle: %q %d", out, code)
	}
	claim := claimOf(e.pod(t, h))
	for _, o := range []struct{ kind, name string }{{"pod", h.ID}, {"secret", h.ID + "-agent"}, {"networkpolicy", h.ID + "-net"}, {"pvc", claim}} {
		if !e.exists(t, o.kind, o.name) {
			t.Fatalf("%s %s does not exist", o.kind, o.name)
		}
	}
	if err := e.p.Destroy(e.ctx(t), h); err != nil {
		t.Fatal(err)
	}
	// Destroy waited: the Pod is gone, not only being deleted.
	if _, err := e.k.Client.CoreV1().Pods(e.k.Namespace).Get(e.ctx(t), h.ID, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Pod after Destroy: %v", err)
	}
	for _, o := range []struct{ kind, name string }{{"secret", h.ID + "-agent"}, {"networkpolicy", h.ID + "-net"}} {
		if e.exists(t, o.kind, o.name) {
			t.Errorf("%s %s is left after Destroy", o.kind, o.name)
		}
	}
	if !e.exists(t, "pvc", claim) {
		t.Fatal("the workspace claim did not survive Destroy")
	}
	if got, err := e.p.List(e.ctx(t), e.cfg.Instance); err != nil || len(got) != 0 {
		t.Fatalf("List after Destroy = %+v, %v", got, err)
	}
	if err := e.p.RemoveWorkspace(e.ctx(t), spec.Workspace); err != nil {
		t.Fatal(err)
	}
	if e.exists(t, "pvc", claim) {
		t.Fatal("the workspace claim is left after RemoveWorkspace")
	}
}

// TestRelabel: a warm sandbox claimed for a runtime carries its labels;
// the labels that tie it to its sandbox cannot change.
func TestRelabel(t *testing.T) {
	e := newEnv(t, nil)
	h := e.created(t, e.spec())
	runtime := uuid.NewString()
	if err := e.p.Relabel(e.ctx(t), h, map[string]string{provider.LabelRuntime: runtime}); err != nil {
		t.Fatal(err)
	}
	if got := e.pod(t, h).Labels[provider.LabelRuntime]; got != runtime {
		t.Fatalf("runtime label %q, want %q", got, runtime)
	}
	err := e.p.Relabel(e.ctx(t), h, map[string]string{provider.LabelSandbox: uuid.NewString()})
	if !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("changing the sandbox label: %v", err)
	}
}

// TestFailedCreate: a Pod the API server refuses (a RuntimeClass the
// cluster lacks) leaves nothing behind, not even the claim Create made; a
// sandbox whose image is missing (pull policy Never) or that no node can
// take fails Start saying why, and Destroy then leaves nothing.
func TestFailedCreate(t *testing.T) {
	t.Run("refused Pod", func(t *testing.T) {
		e := newEnv(t, func(c *kubernetes.Config) { c.RuntimeClass = "pdk-missing" })
		spec := e.spec()
		_, err := e.p.Create(e.ctx(t), spec)
		if err == nil {
			t.Fatal("Create with a missing RuntimeClass succeeded")
		}
		if pub, ok := errdefs.Public(err); !ok || pub.Code != "provider_rejected" && pub.Code != "provider_refused" {
			t.Errorf("error %v", err)
		}
		wantEmpty(t, e)
	})
	for _, tc := range []struct {
		name   string
		mutate func(*kubernetes.Config)
		image  string
		code   string
		says   string
	}{
		{"missing image", nil, "paddock/no-such-image:never", kubernetes.CodeImageNotFound, "ErrImageNeverPull"},
		{"unschedulable", func(c *kubernetes.Config) {
			c.NodeSelector = map[string]string{"pdk-no-such-label": "x"}
			c.StartTimeout = 10 * time.Second
		}, "", kubernetes.CodeSandboxUnschedulable, "node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.mutate)
			spec := e.spec()
			if tc.image != "" {
				spec.Image = tc.image
			}
			h := e.created(t, spec)
			err := e.p.Start(e.ctx(t), h)
			pub, ok := errdefs.Public(err)
			if !ok || pub.Code != tc.code || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Start: %v, want code %s saying %q", err, tc.code, tc.says)
			}
			if err := e.p.Destroy(e.ctx(t), h); err != nil {
				t.Fatal(err)
			}
			for _, o := range []struct{ kind, name string }{{"pod", h.ID}, {"secret", h.ID + "-agent"}, {"networkpolicy", h.ID + "-net"}} {
				if e.exists(t, o.kind, o.name) {
					t.Errorf("%s %s is left", o.kind, o.name)
				}
			}
		})
	}
}

// wantEmpty fails unless e's namespace holds no Pod, Secret,
// NetworkPolicy or claim.
func wantEmpty(t *testing.T, e *env) {
	t.Helper()
	c, ns, ctx := e.k.Client, e.k.Namespace, e.ctx(t)
	pods, err1 := c.CoreV1().Pods(ns).List(ctx, listAll)
	secs, err2 := c.CoreV1().Secrets(ns).List(ctx, listAll)
	nps, err3 := c.NetworkingV1().NetworkPolicies(ns).List(ctx, listAll)
	pvcs, err4 := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, listAll)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pvc := range pvcs.Items {
		if pvc.DeletionTimestamp == nil {
			n++
		}
	}
	if len(pods.Items)+len(nps.Items)+n > 0 || len(secs.Items) > 0 && secs.Items[0].Type != corev1.SecretTypeServiceAccountToken {
		t.Fatalf("left behind: %d pods, %d secrets, %d policies, %d claims", len(pods.Items), len(secs.Items), len(nps.Items), n)
	}
}

var listAll = metav1.ListOptions{}

// claimOf is the claim a Pod mounts at /workspace.
func claimOf(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// TestTrustedCA: the CA a runtime trusts reaches the agent (through the
// Pod's Secret, as --trust), and the processes it starts are pointed at a
// bundle that holds it.
func TestTrustedCA(t *testing.T) {
	e := newEnv(t, nil)
	spec := e.spec()
	spec.TrustedCA = selfSignedPEM(t)
	h := e.started(t, spec)
	out, code := e.run(t, h, "sh", "-c", `cat "$SSL_CERT_FILE"`)
	line := strings.Split(string(spec.TrustedCA), "\n")[1]
	if code != 0 || !strings.Contains(out, line) {
		t.Fatalf("the bundle at $SSL_CERT_FILE (exit %d) lacks the CA:\n%s", code, out)
	}
}

// selfSignedPEM is a new self-signed CA certificate, PEM-encoded.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pdk test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
