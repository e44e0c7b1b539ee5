package e2b

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Metrics: a running sandbox's CPU and memory now, as its cgroup counts
// them (v2, else v1), read by its agent under /sys/fs/cgroup: the CPU
// used twice, a cpuWindow apart, for its use in that window, and the
// memory used, its limit and the page cache. paddock keeps no history, so a sandbox has
// one sample, taken at the request, and a paused one none. Disk is not
// measured (0).

// cpuWindow is how long the CPU use of a sample is measured over.
const cpuWindow = 200 * time.Millisecond

// maxMetricsIDs bounds the sandboxes of one GET /sandboxes/metrics.
const maxMetricsIDs = 100

const cgroupDir = "/sys/fs/cgroup/"

// unlimited is where a cgroup v1 memory limit means none.
const unlimited = 1 << 60

// sandboxMetric is E2B's SandboxMetric.
type sandboxMetric struct {
	Timestamp     time.Time `json:"timestamp"`
	TimestampUnix int64     `json:"timestampUnix"`
	CPUCount      int64     `json:"cpuCount"`
	CPUUsedPct    float64   `json:"cpuUsedPct"`
	MemUsed       int64     `json:"memUsed"`
	MemTotal      int64     `json:"memTotal"`
	MemCache      int64     `json:"memCache"`
	DiskUsed      int64     `json:"diskUsed"`
	DiskTotal     int64     `json:"diskTotal"`
}

// metrics is GET /sandboxes/{id}/metrics: the sample now, when it falls
// in [start, end] (unix seconds, either left out) and the sandbox runs.
func (g *Gateway) metrics(c *call) error {
	start, end, err := window(c.r)
	if err != nil {
		return err
	}
	rt, _, err := g.sandboxOf(c)
	if err != nil {
		return err
	}
	out := []sandboxMetric{}
	now := time.Now()
	if rt.Status == store.RuntimeRunning && !now.Before(start) && (end.IsZero() || !now.After(end)) {
		m, err := g.sample(c.ctx(), rt)
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	writeJSON(c.w, http.StatusOK, out)
	return nil
}

// window is a metrics request's start and end.
func window(r *http.Request) (start, end time.Time, err error) {
	q := r.URL.Query()
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"start", &start}, {"end", &end}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				return start, end, errdefs.InvalidArgument("invalid_"+p.name, "%s must be a unix time in seconds", p.name)
			}
			*p.t = time.Unix(n, 0)
		}
	}
	return start, end, nil
}

// metricsOfMany is GET /sandboxes/metrics?sandbox_ids=a,b: the running
// ones' samples by id; ids not found, or not running, have none.
func (g *Gateway) metricsOfMany(c *call) error {
	var ids []string
	for _, v := range c.r.URL.Query()["sandbox_ids"] {
		for id := range strings.SplitSeq(v, ",") {
			if id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 || len(ids) > maxMetricsIDs {
		return errdefs.InvalidArgument("invalid_sandbox_ids", "sandbox_ids must name 1 to %d sandboxes", maxMetricsIDs)
	}
	out := map[string]sandboxMetric{}
	for _, id := range ids {
		c.r.SetPathValue("id", id)
		rt, _, err := g.sandboxOf(c)
		if errdefs.IsNotFound(err) || err == nil && rt.Status != store.RuntimeRunning {
			continue
		}
		if err != nil {
			return err
		}
		if out[id], err = g.sample(c.ctx(), rt); err != nil {
			return err
		}
	}
	writeJSON(c.w, http.StatusOK, map[string]any{"sandboxes": out})
	return nil
}

// cgroup is where a cgroup hierarchy keeps what a sample reads.
type cgroup struct {
	cpu      string        // the CPU used so far
	cpuField string        // its line in cpu ("" when it is one number)
	cpuUnit  time.Duration // its unit
	memUsed  string
	memMax   string
	memStat  string
	cache    string // memStat's line of the page cache
}

// The hierarchies: v2 (unified), else v1's controllers.
var cgroups = []cgroup{
	{cpu: "cpu.stat", cpuField: "usage_usec", cpuUnit: time.Microsecond,
		memUsed: "memory.current", memMax: "memory.max", memStat: "memory.stat", cache: "file"},
	{cpu: "cpuacct/cpuacct.usage", cpuUnit: time.Nanosecond,
		memUsed: "memory/memory.usage_in_bytes", memMax: "memory/memory.limit_in_bytes", memStat: "memory/memory.stat", cache: "cache"},
}

// sample reads rt's cgroup through its agent.
func (g *Gateway) sample(ctx context.Context, rt store.Runtime) (sandboxMetric, error) {
	agent, err := g.o.Path.Dial(ctx, rt)
	if err != nil {
		return sandboxMetric{}, err
	}
	read := func(name string) ([]byte, error) {
		f, err := agent.ReadFile(ctx, cgroupDir+name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, 1<<20))
	}
	var cg cgroup
	var cpu0 []byte
	for _, cg = range cgroups {
		if cpu0, err = read(cg.cpu); err == nil {
			break
		}
	}
	if err != nil {
		return sandboxMetric{}, errdefs.Unavailable("metrics_unavailable", "the sandbox's cgroup could not be read").WithCause(err)
	}
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return sandboxMetric{}, ctx.Err()
	case <-time.After(cpuWindow):
	}
	files := map[string][]byte{}
	for _, name := range []string{cg.cpu, cg.memUsed, cg.memMax, cg.memStat} {
		if files[name], err = read(name); err != nil {
			return sandboxMetric{}, errdefs.Unavailable("metrics_unavailable", "the sandbox's %s could not be read", name).WithCause(err)
		}
	}
	now := time.Now()
	return metricOf(rt, cg, cpu0, files, now.Sub(t0), now), nil
}

// metricOf computes a sample from two readings of cg's CPU use elapsed
// apart and its memory files.
func metricOf(rt store.Runtime, cg cgroup, cpu0 []byte, files map[string][]byte, elapsed time.Duration, now time.Time) sandboxMetric {
	cpus := max(1, int64(math.Ceil(float64(rt.Config.CPUMillis)/1000)))
	m := sandboxMetric{Timestamp: now.UTC(), TimestampUnix: now.Unix(), CPUCount: cpus}
	usage := func(b []byte) int64 {
		if cg.cpuField == "" {
			return number(b)
		}
		return statField(b, cg.cpuField)
	}
	used := time.Duration(usage(files[cg.cpu])-usage(cpu0)) * cg.cpuUnit
	if elapsed > 0 && used > 0 {
		// Of the cores the runtime may use, as E2B counts it.
		m.CPUUsedPct = math.Round(used.Seconds()/elapsed.Seconds()/(float64(rt.Config.CPUMillis)/1000)*10000) / 100
	}
	m.MemUsed = number(files[cg.memUsed])
	m.MemTotal = number(files[cg.memMax])
	if m.MemTotal <= 0 || m.MemTotal >= unlimited {
		m.MemTotal = rt.Config.MemoryMB << 20 // no limit of its own: the runtime's
	}
	m.MemCache = statField(files[cg.memStat], cg.cache)
	return m
}

// statField is the value of a "key value" line of a cgroup stat file.
func statField(b []byte, key string) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// number is a cgroup file's one number; "max" or anything else is 0.
func number(b []byte) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}
