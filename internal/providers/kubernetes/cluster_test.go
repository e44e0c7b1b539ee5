package kubernetes_test

import (
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// cluster is the test cluster (testenv.Kube: a namespace of the test's
// own, deleted when it ends) and the images its sandboxes use: the shim
// image built from this tree, and the test image, both imported into
// every node.
type cluster struct {
	*testenv.KubeCluster
	ShimImage, Image string
}

// kubeCluster brings the test cluster up (or skips; fails with
// PADDOCK_REQUIRE_KUBE=1) and imports the images.
func kubeCluster(t *testing.T) *cluster {
	t.Helper()
	k := testenv.Kube(t)
	return &cluster{KubeCluster: k, ShimImage: testenv.KubeShimImage(t), Image: testenv.KubeImage(t, testenv.TestImage)}
}
