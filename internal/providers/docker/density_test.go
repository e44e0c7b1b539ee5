package docker_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
)

// BenchmarkWorkspaceDisks makes b.N workspace disks of the default quota
// (10 GiB) the way Create does (a sparse image, mkfs.ext4, a loop mount),
// all mounted at once as for b.N sandboxes, and reports what the host pays
// for each: kernel memory, host disk, and a loop device; then removes
// them all and checks that no loop device is left. Run it as root:
//
//	go test -run '^$' -bench WorkspaceDisks -benchtime 1000x ./internal/providers/docker
func BenchmarkWorkspaceDisks(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("loop mounts need root")
	}
	dir, err := os.MkdirTemp("", "pdkdensity")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p := docker.DiskProvider(dir)
	names := make([]string, b.N)
	defer func() {
		for _, n := range names {
			if n != "" {
				docker.RemoveDisk(b.Context(), p, n)
			}
		}
	}()
	before := meminfo(b)
	t0 := time.Now()
	b.ResetTimer()
	for i := range b.N {
		names[i] = fmt.Sprintf("pdkdensity-%d", i)
		if err := docker.MakeDisk(b.Context(), p, names[i], docker.DefaultDiskMB); err != nil {
			b.Fatalf("disk %d: %v", i, err)
		}
	}
	b.StopTimer()
	took := time.Since(t0)
	after := meminfo(b)
	var allocated int64
	for _, n := range names {
		img := filepath.Join(dir, n+".img")
		var st syscall.Stat_t
		if err := syscall.Stat(img, &st); err != nil {
			b.Fatal(err)
		}
		allocated += st.Blocks * 512
	}
	loops := len(testenv.LoopsUnder(dir))
	if loops != b.N {
		b.Fatalf("%d disks mounted on %d loop devices", b.N, loops)
	}
	// The kernel's own memory for them: slab (inodes, buffers' heads,
	// the loop and ext4 structures), the journal threads' stacks, and the
	// block devices' cached metadata. (MemAvailable moves with everything
	// else on the host.)
	kernel := int64(0)
	for _, k := range []string{"Slab", "KernelStack", "Buffers"} {
		kernel += after[k] - before[k]
	}
	perDisk := func(v int64) float64 { return float64(v) / float64(b.N) }
	b.ReportMetric(perDisk(kernel), "KiB-kernel/disk")
	b.ReportMetric(perDisk(allocated>>10), "KiB-disk/disk")
	b.ReportMetric(float64(loops), "loop-devices")
	b.Logf("%d disks of %d MiB mounted in %v: kernel memory +%d MiB (slab %+d, stacks %+d, buffers %+d MiB), %d MiB of host disk, %d loop devices",
		b.N, docker.DefaultDiskMB, took.Round(time.Millisecond), kernel>>10, (after["Slab"]-before["Slab"])>>10,
		(after["KernelStack"]-before["KernelStack"])>>10, (after["Buffers"]-before["Buffers"])>>10, allocated>>20, loops)

	for i, n := range names {
		docker.RemoveDisk(b.Context(), p, n)
		names[i] = ""
	}
	// Lazy unmounts: the loop devices go once the kernel lets go of them.
	testenv.Eventually(b, func() error {
		if n := len(testenv.LoopsUnder(dir)); n > 0 {
			return fmt.Errorf("%d loop devices still attached after the disks were removed", n)
		}
		return nil
	})
}

// meminfo reads /proc/meminfo, in KiB.
func meminfo(b *testing.B) map[string]int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 {
			v, _ := strconv.ParseInt(fields[1], 10, 64)
			out[strings.TrimSuffix(fields[0], ":")] = v
		}
	}
	return out
}
