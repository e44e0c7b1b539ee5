package testenv

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeCluster is the local Kubernetes test cluster of
// scripts/kube-cluster.sh, as a test sees it: the admin kubeconfig and a
// client, a namespace of the test's own (deleted when it ends), the host
// address Pods reach (where test servers listen), the nodes, and the
// cluster's storage and runtime classes.
type KubeCluster struct {
	Kubeconfig   string
	Namespace    string
	HostAddr     netip.Addr
	Nodes        []string
	StorageClass string
	RuntimeClass string
	PodCIDRs     []netip.Prefix
	Client       kubernetes.Interface
}

// kubeMissing skips or, with PADDOCK_REQUIRE_KUBE (or CI) set, fails.
func kubeMissing(t testing.TB, format string, args ...any) {
	t.Helper()
	missing(t, "PADDOCK_REQUIRE_KUBE", format, args...)
}

// kubeEnv is the cluster's `env`, read once per test process after `up`.
var kubeEnv struct {
	sync.Mutex
	vars map[string]string
}

// RequireKube skips (or, with PADDOCK_REQUIRE_KUBE=1, fails) unless the
// test cluster can run here, and brings it up (once per machine, under a
// lock, so parallel test binaries do not race).
func RequireKube(t testing.TB) {
	t.Helper()
	kubeVars(t)
}

func kubeVars(t testing.TB) map[string]string {
	t.Helper()
	kubeEnv.Lock()
	defer kubeEnv.Unlock()
	if kubeEnv.vars == nil {
		if why := kubeUnavailable(); why != "" {
			kubeMissing(t, "%s", why)
		}
		// A failure is not kept: the next test tries again.
		vars, err := kubeUp(RepoRoot(t))
		if err == nil {
			err = sweepKubeNamespaces(vars)
		}
		if err != nil {
			kubeMissing(t, "kubernetes test cluster: %v", err)
		}
		kubeEnv.vars = vars
	}
	return kubeEnv.vars
}

// kubeUnavailable says why the cluster cannot run on this machine, or "".
// The binaries are built by scripts/kube-build.sh (minutes, cold): a test
// builds them only where the cluster is required.
func kubeUnavailable() string {
	if os.Geteuid() != 0 {
		return "the kubernetes test cluster needs root"
	}
	for _, p := range []string{"/usr/bin/etcd", "/usr/bin/containerd", "/usr/lib/cni/ptp"} {
		if _, err := os.Stat(p); err != nil {
			return p + " missing: run scripts/setup-host.sh --kube"
		}
	}
	cache := os.Getenv("PADDOCK_KUBE_CACHE")
	if cache == "" {
		cache = "/var/cache/paddock-kube"
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "*", "bin", "kubelet")); len(m) == 0 && os.Getenv("PADDOCK_REQUIRE_KUBE") == "" {
		return "kubernetes binaries not built: run scripts/kube-build.sh"
	}
	return ""
}

// kubeUp runs `kube-cluster.sh up` under a machine-wide lock, then reads
// `kube-cluster.sh env`.
func kubeUp(root string) (map[string]string, error) {
	lock, err := os.OpenFile("/var/lock/paddock-kube-testenv.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	script := filepath.Join(root, "scripts", "kube-cluster.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, script, "up").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kube-cluster.sh up: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, script, "env").Output()
	if err != nil {
		return nil, fmt.Errorf("kube-cluster.sh env: %v", err)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	return vars, nil
}

// Kube brings the test cluster up if it is not (see RequireKube) and
// returns it with a fresh namespace for t, deleted (and waited on until
// its Pods are gone) when t ends.
func Kube(t testing.TB) *KubeCluster {
	t.Helper()
	vars := kubeVars(t)
	kc, err := newKubeCluster(vars)
	if err != nil {
		t.Fatalf("kubernetes test cluster: %v", err)
	}
	kc.Namespace = kubeNamespace(t, kc.Client)
	return kc
}

func newKubeCluster(vars map[string]string) (*KubeCluster, error) {
	kc := &KubeCluster{
		Kubeconfig:   vars["PADDOCK_KUBECONFIG"],
		StorageClass: vars["PADDOCK_KUBE_STORAGE_CLASS"],
		RuntimeClass: vars["PADDOCK_KUBE_RUNTIME_CLASS"],
		Nodes:        strings.Split(vars["PADDOCK_KUBE_NODES"], ","),
	}
	var err error
	if kc.HostAddr, err = netip.ParseAddr(vars["PADDOCK_KUBE_HOST_ADDR"]); err != nil {
		return nil, fmt.Errorf("PADDOCK_KUBE_HOST_ADDR: %w", err)
	}
	for _, c := range strings.Split(vars["PADDOCK_KUBE_POD_CIDRS"], ",") {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("PADDOCK_KUBE_POD_CIDRS: %w", err)
		}
		kc.PodCIDRs = append(kc.PodCIDRs, p)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc.Kubeconfig)
	if err != nil {
		return nil, err
	}
	// A transport of the test's own, without keep-alives: no connection
	// (and no reader goroutine) outlives a request.
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	rt, err := rest.HTTPWrappersForConfig(cfg, &http.Transport{TLSClientConfig: tlsCfg, DisableKeepAlives: true})
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: rt}
	if kc.Client, err = kubernetes.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	return kc, nil
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// A test's namespace carries these labels: what it is, and the test
// process that made it.
const (
	testNamespaceLabel = "dev.paddock.test"
	testPIDLabel       = "dev.paddock.test-pid"
)

// sweepKubeNamespaces deletes the namespaces of test processes that are
// gone (killed before their cleanup ran), with everything in them. The
// cluster runs on this machine, so a pid that is not running here is not
// a test's any more.
func sweepKubeNamespaces(vars map[string]string) error {
	kc, err := newKubeCluster(vars)
	if err != nil {
		return err
	}
	ctx := context.Background()
	list, err := kc.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: testNamespaceLabel + "=true"})
	if err != nil {
		return fmt.Errorf("list test namespaces: %w", err)
	}
	for _, ns := range list.Items {
		pid, err := strconv.Atoi(ns.Labels[testPIDLabel])
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH || ns.DeletionTimestamp != nil {
			continue
		}
		err = kc.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}

// kubeNamespace creates a namespace named after t and deletes it when t
// ends, waiting until its Pods are gone.
func kubeNamespace(t testing.TB, c kubernetes.Interface) string {
	t.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 45 {
		base = strings.TrimRight(base[:45], "-")
	}
	name := "t-" + base + "-" + hex.EncodeToString(suffix)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		testNamespaceLabel: "true", testPIDLabel: strconv.Itoa(os.Getpid()),
	}}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		err := c.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", name, err)
			return
		}
		Eventually(t, func() error {
			pods, err := c.CoreV1().Pods(name).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if n := len(pods.Items); n > 0 {
				return fmt.Errorf("namespace %s still has %d pods", name, n)
			}
			return nil
		})
	})
	// Pods are admitted only once the namespace's service account exists.
	Eventually(t, func() error {
		_, err := c.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	return name
}

var kubeImages struct {
	sync.Mutex
	done map[string]bool
}

// KubeImage copies the Docker image img into every node of the test
// cluster (once per test process; the script skips a node that has it)
// and returns img. Pods use it with imagePullPolicy Never.
func KubeImage(t testing.TB, img string) string {
	t.Helper()
	RequireDocker(t, img)
	kubeVars(t)
	kubeImages.Lock()
	defer kubeImages.Unlock()
	if kubeImages.done[img] {
		return img
	}
	script := filepath.Join(RepoRoot(t), "scripts", "kube-cluster.sh")
	if out, err := exec.Command(script, "import", img).CombinedOutput(); err != nil {
		t.Fatalf("kube-cluster.sh import %s: %v\n%s", img, err, out)
	}
	if kubeImages.done == nil {
		kubeImages.done = map[string]bool{}
	}
	kubeImages.done[img] = true
	return img
}

// KubeShimImage builds the image that carries the freshly built static
// paddock-shim at /paddock-shim (and nothing else), named by the binary's
// hash, imports it into the test cluster and returns its name.
func KubeShimImage(t testing.TB) string {
	t.Helper()
	RequireDocker(t)
	bin := Binary(t, "paddock-shim")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	img := "paddock.local/paddock-shim:" + hex.EncodeToString(sum[:8])
	if exec.Command("docker", "image", "inspect", img).Run() != nil {
		var buf bytes.Buffer
		if err := writeShimTar(&buf, data); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("docker", "import", "--change", `ENTRYPOINT ["/paddock-shim"]`, "-", img)
		cmd.Stdin = &buf
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("docker import %s: %v\n%s", img, err, out)
		}
	}
	return KubeImage(t, img)
}

// writeShimTar writes a tar holding shim at /paddock-shim, mode 0555.
func writeShimTar(w io.Writer, shim []byte) error {
	tw := tar.NewWriter(w)
	hdr := &tar.Header{Name: "paddock-shim", Mode: 0o555, Size: int64(len(shim)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := tw.Write(shim); err != nil {
		return err
	}
	return tw.Close()
}
