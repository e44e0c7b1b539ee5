package kubernetes

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

func TestStatusOf(t *testing.T) {
	gated := []corev1.PodSchedulingGate{{Name: startGate}}
	for _, tc := range []struct {
		name  string
		pod   corev1.Pod
		state provider.State
	}{
		{"gated", corev1.Pod{Spec: corev1.PodSpec{SchedulingGates: gated}, Status: corev1.PodStatus{Phase: corev1.PodPending}}, provider.StateStopped},
		{"starting", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, provider.StateRunning},
		{"running", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, provider.StateRunning},
		{"failed", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			Name: sandboxName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}},
		}}}}, provider.StateStopped},
		{"succeeded", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, provider.StateStopped},
	} {
		if got := statusOf(&tc.pod); got.State != tc.state {
			t.Errorf("%s: state %q, want %q", tc.name, got.State, tc.state)
		}
	}
	failed := corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: sandboxName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}},
	}}}}
	if st := statusOf(&failed); st.ExitCode != 3 || st.Error != "Error" {
		t.Errorf("failed status %+v", st)
	}
}

// TestStartFailure: a container waiting for a reason that waiting does
// not cure fails Start at once, with an image error for a missing image.
func TestStartFailure(t *testing.T) {
	waiting := func(reason string, init bool) *corev1.Pod {
		cs := []corev1.ContainerStatus{{Name: sandboxName, Image: "img:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
		pod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if init {
			pod.Status.InitContainerStatuses = cs
		} else {
			pod.Status.ContainerStatuses = cs
		}
		return pod
	}
	if err := startFailure(waiting("ErrImageNeverPull", false)); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("missing image: %v", err)
	} else if pub, _ := errdefs.Public(err); pub.Code != CodeImageNotFound {
		t.Errorf("missing image code %q", pub.Code)
	}
	if err := startFailure(waiting("ErrImageNeverPull", true)); err == nil {
		t.Error("a missing shim image is not a failure")
	}
	if err := startFailure(waiting("CreateContainerConfigError", false)); err == nil {
		t.Error("a container config error is not a failure")
	}
	for _, r := range []string{"ContainerCreating", "PodInitializing", "ImagePullBackOff"} {
		if err := startFailure(waiting(r, false)); err != nil {
			t.Errorf("%s: %v, want to wait", r, err)
		}
	}
}
