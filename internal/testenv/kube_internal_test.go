package testenv

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSweepKubeNamespaces: the namespace of a test process that is gone
// is deleted; a running process's is kept.
func TestSweepKubeNamespaces(t *testing.T) {
	vars := kubeVars(t)
	kc, err := newKubeCluster(vars)
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mk := func(name string, pid int) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			testNamespaceLabel: "true", testPIDLabel: strconv.Itoa(pid),
		}}}
		if _, err := kc.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kc.Client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	dead, live := "t-sweep-dead-"+randomHex(3), "t-sweep-live-"+randomHex(3)
	mk(dead, gone.Process.Pid)
	mk(live, os.Getpid())
	if err := sweepKubeNamespaces(vars); err != nil {
		t.Fatal(err)
	}
	ns, err := kc.Client.CoreV1().Namespaces().Get(ctx, dead, metav1.GetOptions{})
	if err == nil && ns.DeletionTimestamp == nil {
		t.Errorf("namespace %s of a finished process was kept", dead)
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	ns, err = kc.Client.CoreV1().Namespaces().Get(ctx, live, metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("namespace %s of this process was swept: %v", live, err)
	}
}
