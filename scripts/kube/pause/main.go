// Command pause is the pause container of paddock's local test cluster
// (scripts/kube-cluster.sh): it holds a Pod's namespaces and does nothing
// else until it is told to stop. Kubernetes' own pause image comes from a
// registry, which the test cluster cannot reach.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
