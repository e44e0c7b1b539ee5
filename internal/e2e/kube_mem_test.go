package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
)

// kubeControlPlane are the test cluster's control-plane processes, named
// as their pidfiles are (scripts/kube-cluster.sh).
var kubeControlPlane = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// memSnapshot is the memory of this process (the in-process server) and
// of the cluster's processes at one moment, in MiB.
type memSnapshot struct {
	heap, rss float64
	procs     map[string]float64 // by pidfile name
}

// takeMem reads the Go heap in use (after a GC), this process's RSS, and
// the RSS of every process with a pidfile under the cluster's run
// directory (PADDOCK_KUBE_DIR, default /var/lib/paddock-kube).
func takeMem() (memSnapshot, error) {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	s := memSnapshot{heap: float64(ms.HeapAlloc) / (1 << 20), procs: map[string]float64{}}
	var err error
	if s.rss, err = rssMiB("self"); err != nil {
		return s, err
	}
	dir := os.Getenv("PADDOCK_KUBE_DIR")
	if dir == "" {
		dir = "/var/lib/paddock-kube"
	}
	files, err := filepath.Glob(filepath.Join(dir, "run", "*.pid"))
	if err != nil || len(files) == 0 {
		return s, fmt.Errorf("no pidfiles in %s/run: %v", dir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return s, err
		}
		pid, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		if s.procs[strings.TrimSuffix(filepath.Base(f), ".pid")], err = rssMiB(pid); err != nil {
			return s, err
		}
	}
	return s, nil
}

// nodeRSS is the summed RSS of the nodes' daemons (kubelets, containerds,
// policy enforcers): every process that is not the control plane's.
func (s memSnapshot) nodeRSS() float64 {
	var sum float64
	for name, v := range s.procs {
		if !strings.HasPrefix(name, "pdk-node-") {
			continue
		}
		sum += v
	}
	return sum
}

// rssMiB is VmRSS of /proc/PID/status in MiB.
func rssMiB(pid string) (float64, error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/%s/status: no VmRSS", pid)
}
