package testenv_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paddockhq/paddock/internal/testenv"
)

// The checks below are what the kubernetes provider relies on in the test
// cluster of scripts/kube-cluster.sh.

const pongPort = 8080

func ptrTo[T any](v T) *T { return &v }

// pongServer is a command that answers every connection on pongPort with
// "pong".
var pongServer = []string{"sh", "-c", fmt.Sprintf("while true; do echo pong | nc -l -p %d; done", pongPort)}

// kubePod creates a Pod of the test image on node running cmd, as uid
// 1000 like the provider's Pods.
func kubePod(t *testing.T, kc *testenv.KubeCluster, name, node string, cmd []string, mod ...func(*corev1.PodSpec)) *corev1.Pod {
	t.Helper()
	spec := corev1.PodSpec{
		NodeName:         node,
		RuntimeClassName: ptrTo(kc.RuntimeClass),
		RestartPolicy:    corev1.RestartPolicyNever,
		// sh as PID 1 ignores SIGTERM: no grace to wait out.
		TerminationGracePeriodSeconds: ptrTo[int64](0),
		AutomountServiceAccountToken:  ptrTo(false),
		SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptrTo[int64](1000), RunAsGroup: ptrTo[int64](1000), FSGroup: ptrTo[int64](1000)},
		Containers: []corev1.Container{{
			Name: "main", Image: testenv.TestImage, ImagePullPolicy: corev1.PullNever, Command: cmd,
		}},
	}
	for _, m := range mod {
		m(&spec)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}}, Spec: spec}
	pod, err := kc.Client.CoreV1().Pods(kc.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	return pod
}

// waitPod waits until the Pod is in one of phases and returns it.
func waitPod(t *testing.T, kc *testenv.KubeCluster, name string, phases ...corev1.PodPhase) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	testenv.Eventually(t, func() error {
		var err error
		pod, err = kc.Client.CoreV1().Pods(kc.Namespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, p := range phases {
			if pod.Status.Phase == p && (p != corev1.PodRunning || pod.Status.PodIP != "") {
				return nil
			}
		}
		return fmt.Errorf("pod %s is %s (%s), waiting for %v", name, pod.Status.Phase, pod.Status.Message, phases)
	})
	return pod
}

func podLogs(t *testing.T, kc *testenv.KubeCluster, name string) string {
	t.Helper()
	b, err := kc.Client.CoreV1().Pods(kc.Namespace).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("logs of %s: %v", name, err)
	}
	return string(b)
}

// pong dials ip:pongPort from the host and reads one line.
func pong(ip string) error {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, fmt.Sprint(pongPort)), 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read from %s: %w", ip, err)
	}
	if line != "pong\n" {
		return fmt.Errorf("%s answered %q", ip, line)
	}
	return nil
}

func TestKubeNodesReady(t *testing.T) {
	kc := testenv.Kube(t)
	ctx := context.Background()
	if len(kc.Nodes) != 2 {
		t.Fatalf("nodes %v, want two", kc.Nodes)
	}
	for i, name := range kc.Nodes {
		node, err := kc.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ready := false
		for _, c := range node.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		if !ready {
			t.Errorf("node %s is not Ready: %+v", name, node.Status.Conditions)
		}
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && a.Address == kc.HostAddr.String() {
				t.Errorf("node %s has the host's address", name)
			}
		}
		if len(kc.PodCIDRs) <= i {
			t.Fatalf("pod CIDRs %v for nodes %v", kc.PodCIDRs, kc.Nodes)
		}
	}
	sc, err := kc.Client.StorageV1().StorageClasses().Get(ctx, kc.StorageClass, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" {
		t.Errorf("storage class %s is not the default", sc.Name)
	}
	rc, err := kc.Client.NodeV1().RuntimeClasses().Get(ctx, kc.RuntimeClass, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Handler != "runc" {
		t.Errorf("runtime class %s has handler %q", rc.Name, rc.Handler)
	}
}

// TestKubePodNetwork: a Pod on each node is reached by the host at its
// pod IP, which lies in its node's pod CIDR; a Pod on node 1 reaches the
// one on node 2, and the host's address.
func TestKubePodNetwork(t *testing.T) {
	kc := testenv.Kube(t)
	testenv.KubeImage(t, testenv.TestImage)
	for i, node := range kc.Nodes {
		kubePod(t, kc, fmt.Sprintf("srv%d", i+1), node, pongServer)
	}
	ips := make([]string, len(kc.Nodes))
	for i, node := range kc.Nodes {
		pod := waitPod(t, kc, fmt.Sprintf("srv%d", i+1), corev1.PodRunning)
		if pod.Spec.NodeName != node {
			t.Fatalf("pod %s runs on %s, want %s", pod.Name, pod.Spec.NodeName, node)
		}
		ip := netip.MustParseAddr(pod.Status.PodIP)
		if !kc.PodCIDRs[i].Contains(ip) {
			t.Errorf("pod on %s has IP %s, outside %s", node, ip, kc.PodCIDRs[i])
		}
		ips[i] = ip.String()
		testenv.Eventually(t, func() error { return pong(ips[i]) })
	}

	ln := listenHost(t, kc)
	cmd := fmt.Sprintf("nc -w 5 %s %d </dev/null | grep -qx pong && nc -w 5 %s </dev/null | grep -qx ok",
		ips[1], pongPort, strings.Replace(ln.Addr().String(), ":", " ", 1))
	kubePod(t, kc, "client", kc.Nodes[0], []string{"sh", "-c", cmd})
	if pod := waitPod(t, kc, "client", corev1.PodSucceeded, corev1.PodFailed); pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("the pod on %s did not reach %s:%d and the host's %s: %s", kc.Nodes[0], ips[1], pongPort, ln.Addr(), podLogs(t, kc, "client"))
	}
}

// listenHost listens on the host address Pods reach and answers every
// connection with "ok".
func listenHost(t *testing.T, kc *testenv.KubeCluster) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(kc.HostAddr.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("ok\n"))
			c.Close()
		}
	}()
	return ln
}

// TestKubeNetworkPolicyEnforced: a NetworkPolicy that denies all ingress
// and egress stops the host reaching a Pod and a Pod reaching the host;
// deleting it lets both through again. This is kube-network-policies at
// work: without an enforcer a NetworkPolicy changes nothing.
func TestKubeNetworkPolicyEnforced(t *testing.T) {
	kc := testenv.Kube(t)
	testenv.KubeImage(t, testenv.TestImage)
	ctx := context.Background()
	ln := listenHost(t, kc)
	hostPort := strings.Replace(ln.Addr().String(), ":", " ", 1)
	// The client reports when a connection to the host first fails, then
	// when one first succeeds again.
	loop := fmt.Sprintf(`ok() { nc -w 2 %s </dev/null | grep -qx ok; }
while ok; do sleep 0.2; done; echo blocked
until ok; do sleep 0.2; done; echo restored; sleep 3600`, hostPort)
	kubePod(t, kc, "srv", kc.Nodes[1], pongServer)
	kubePod(t, kc, "client", kc.Nodes[0], []string{"sh", "-c", loop})
	ip := waitPod(t, kc, "srv", corev1.PodRunning).Status.PodIP
	waitPod(t, kc, "client", corev1.PodRunning)
	testenv.Eventually(t, func() error { return pong(ip) })
	if logs := podLogs(t, kc, "client"); logs != "" {
		t.Fatalf("the client could not reach the host before any policy: %q", logs)
	}

	deny := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-all"},
		Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
	if _, err := kc.Client.NetworkingV1().NetworkPolicies(kc.Namespace).Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		if err := pong(ip); err == nil {
			return fmt.Errorf("the host still reaches %s under deny-all", ip)
		}
		if logs := podLogs(t, kc, "client"); !strings.Contains(logs, "blocked") {
			return fmt.Errorf("the client still reaches the host under deny-all")
		}
		return nil
	})

	if err := kc.Client.NetworkingV1().NetworkPolicies(kc.Namespace).Delete(ctx, deny.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		if err := pong(ip); err != nil {
			return err
		}
		if logs := podLogs(t, kc, "client"); !strings.Contains(logs, "restored") {
			return fmt.Errorf("the client does not reach the host again: %q", logs)
		}
		return nil
	})
}

// TestKubeVolumeMovesBetweenNodes: a claim of the cluster's storage class
// binds, and a file a Pod on node 1 writes there (as uid 1000) is read by
// a Pod on node 2.
func TestKubeVolumeMovesBetweenNodes(t *testing.T) {
	kc := testenv.Kube(t)
	testenv.KubeImage(t, testenv.TestImage)
	ctx := context.Background()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "work"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptrTo(kc.StorageClass),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Mi")}},
		},
	}
	if _, err := kc.Client.CoreV1().PersistentVolumeClaims(kc.Namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		got, err := kc.Client.CoreV1().PersistentVolumeClaims(kc.Namespace).Get(ctx, pvc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("claim is %s", got.Status.Phase)
		}
		return nil
	})
	mount := func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name},
		}}}
		s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/work"}}
	}
	token := "written-on-" + kc.Nodes[0]
	kubePod(t, kc, "writer", kc.Nodes[0], []string{"sh", "-c", "echo " + token + " >/work/f"}, mount)
	if p := waitPod(t, kc, "writer", corev1.PodSucceeded, corev1.PodFailed); p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("writer on %s failed: %s", kc.Nodes[0], podLogs(t, kc, "writer"))
	}
	kubePod(t, kc, "reader", kc.Nodes[1], []string{"cat", "/work/f"}, mount)
	if p := waitPod(t, kc, "reader", corev1.PodSucceeded, corev1.PodFailed); p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("reader on %s failed: %s", kc.Nodes[1], podLogs(t, kc, "reader"))
	}
	if got := podLogs(t, kc, "reader"); got != token+"\n" {
		t.Fatalf("reader on %s read %q, want %q", kc.Nodes[1], got, token)
	}
}

// TestKubeOwnedSecretCollected: a Secret owned by a Pod is removed by the
// cluster's garbage collector once the Pod is deleted.
func TestKubeOwnedSecretCollected(t *testing.T) {
	kc := testenv.Kube(t)
	testenv.KubeImage(t, testenv.TestImage)
	ctx := context.Background()
	pod := kubePod(t, kc, "owner", kc.Nodes[0], []string{"sleep", "3600"})
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
		}}},
		StringData: map[string]string{"k": "v"},
	}
	if _, err := kc.Client.CoreV1().Secrets(kc.Namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kc.Client.CoreV1().Pods(kc.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptrTo[int64](0)}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		_, err := kc.Client.CoreV1().Secrets(kc.Namespace).Get(ctx, sec.Name, metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("secret %s outlives its pod", sec.Name)
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
}

// TestKubeShimImage: the shim image runs in the cluster as the provider
// runs it (uid 1000, read-only root): its only file, /paddock-shim, is the
// static binary just built.
func TestKubeShimImage(t *testing.T) {
	kc := testenv.Kube(t)
	img := testenv.KubeShimImage(t)
	if again := testenv.KubeShimImage(t); again != img {
		t.Fatalf("the shim image is %s, then %s", img, again)
	}
	kubePod(t, kc, "shim", kc.Nodes[1], []string{"/paddock-shim", "version"}, func(s *corev1.PodSpec) {
		s.Containers[0].Image = img
		s.Containers[0].SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: ptrTo(true)}
	})
	if p := waitPod(t, kc, "shim", corev1.PodSucceeded, corev1.PodFailed); p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("paddock-shim version failed in %s: %s", img, podLogs(t, kc, "shim"))
	}
	if out := strings.TrimSpace(podLogs(t, kc, "shim")); out == "" {
		t.Fatal("paddock-shim version printed nothing")
	}
}

// TestKubePodPidsLimit: the kubelets cap every Pod's processes
// (podPidsLimit), the pids limit the provider relies on and cannot set per
// Pod.
func TestKubePodPidsLimit(t *testing.T) {
	kc := testenv.Kube(t)
	testenv.KubeImage(t, testenv.TestImage)
	pod := kubePod(t, kc, "pids", kc.Nodes[0], []string{"sleep", "3600"})
	waitPod(t, kc, "pids", corev1.PodRunning)
	// cgroup v1 (this machine): <root>/<node's cgroupRoot>/kubepods/[<qos>/]pod<uid>.
	pattern := []string{
		"/sys/fs/cgroup/pids/*/kubepods/pod" + string(pod.UID) + "/pids.max",
		"/sys/fs/cgroup/pids/*/kubepods/*/pod" + string(pod.UID) + "/pids.max",
	}
	var files []string
	for _, p := range pattern {
		m, _ := filepath.Glob(p)
		files = append(files, m...)
	}
	if len(files) != 1 {
		t.Fatalf("pod %s's pids cgroup: found %v", pod.UID, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != "1024" {
		t.Fatalf("%s = %s, want 1024", files[0], got)
	}
}
