package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// BenchmarkExecRoundTrip runs `true` in one sandbox through the whole API
// (SDK → HTTP → server → agent → back), collected and streamed, and with
// `docker exec` on the same container; the docker-exec result also reports
// how many times slower it is than the collected API exec (x-api). Its
// floor is the host spawning /bin/true and waiting for it, from Go and
// from a bash loop of 2,000 (bash-loop-µs, the mean); the collected API
// exec reports how many times the floor's median it takes (x-floor) and
// the bash loop's mean (x-bash-loop).
//
// Where the rest goes, in the same run: http-floor is the same SDK call
// answered by a bare net/http server on loopback that decodes the
// request and encodes a result, nothing else (the transport and JSON
// floor of any API call); api-get reads the runtime through the API (the
// access check and the store's reads, no agent); api-stat is a file's
// stat through the whole API, the agent's link included but no spawn.
// api less api-stat is about what the spawn costs in the agent; api-stat
// less api-get, the agent's link; api-get less http-floor, the API's own
// work.
//
//	go test -run '^$' -bench ExecRoundTrip ./internal/e2e
func BenchmarkExecRoundTrip(b *testing.B) {
	s := defaultSandbox(b)
	ctx := context.Background()
	req := pc.ExecRequest{Argv: []string{"true"}}
	// The floor: this host spawning true and waiting for it, from Go (each
	// spawn timed) and from a bash loop of 2,000 (the mean), in this run.
	var floorMedian, bashLoop, apiMedian float64
	b.Run("floor", func(b *testing.B) {
		floorMedian = testenv.BenchLatency(b, func() error { return exec.Command("/bin/true").Run() })
		start := time.Now()
		if out, err := exec.Command("bash", "-c", "for i in $(seq 2000); do /bin/true; done").CombinedOutput(); err != nil {
			b.Fatalf("the bash loop: %v: %s", err, out)
		}
		bashLoop = float64(time.Since(start).Microseconds()) / 2000
		b.ReportMetric(bashLoop, "bash-loop-µs")
	})
	b.Run("http-floor", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var in pc.ExecRequest
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(pc.ExecResult{ID: "p-1", PID: 2, Stdout: []byte{}, Stderr: []byte{}, Exit: &pc.ExitStatus{}})
		}))
		defer srv.Close()
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		bare, err := pc.New(srv.URL, "key", pc.WithHTTPClient(&http.Client{Transport: tr}))
		if err != nil {
			b.Fatal(err)
		}
		testenv.BenchLatency(b, func() error {
			res, err := bare.Exec(ctx, "acme", "dev", s.rid, req)
			if err == nil && res.Exit == nil {
				err = errors.New("no exit")
			}
			return err
		})
	})
	b.Run("api-get", func(b *testing.B) {
		testenv.BenchLatency(b, func() error {
			_, err := s.sdk.GetRuntime(ctx, "acme", "dev", s.rid)
			return err
		})
	})
	b.Run("api-stat", func(b *testing.B) {
		testenv.BenchLatency(b, func() error {
			_, err := s.sdk.StatFile(ctx, "acme", "dev", s.rid, "/workspace")
			return err
		})
	})
	b.Run("api", func(b *testing.B) {
		apiMedian = testenv.BenchLatency(b, func() error {
			res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, req)
			if err == nil && (res.Exit == nil || res.Exit.Code != 0) {
				err = fmt.Errorf("exit %+v", res.Exit)
			}
			return err
		})
		if floorMedian > 0 {
			b.ReportMetric(apiMedian/floorMedian, "x-floor")
		}
		if bashLoop > 0 {
			b.ReportMetric(apiMedian/bashLoop, "x-bash-loop")
		}
	})
	b.Run("api-member", func(b *testing.B) {
		// As most callers are: a member of the org (not an admin) with a
		// key of their own, seeing the workspace as its member.
		s.env.Must(b, 201, "POST", "/api/v1/org/acme/members", pc.AddOrgMemberRequest{Member: "bench@example.com", Role: "member"})
		s.env.Must(b, 201, "POST", "/api/v1/org/acme/ws/dev/members", pc.AddMemberRequest{Member: "bench@example.com"})
		var key pc.CreatedKey
		s.env.Must(b, 201, "POST", "/api/v1/org/acme/keys", pc.CreateKeyRequest{Member: "bench@example.com"}).Decode(b, &key)
		member, err := pc.New(s.env.URL, key.Key, pc.WithHTTPClient(&http.Client{Transport: s.transport}))
		if err != nil {
			b.Fatal(err)
		}
		m := testenv.BenchLatency(b, func() error {
			res, err := member.Exec(ctx, "acme", "dev", s.rid, req)
			if err == nil && (res.Exit == nil || res.Exit.Code != 0) {
				err = fmt.Errorf("exit %+v", res.Exit)
			}
			return err
		})
		if bashLoop > 0 {
			b.ReportMetric(m/bashLoop, "x-bash-loop")
		}
	})
	b.Run("api-streamed", func(b *testing.B) {
		testenv.BenchLatency(b, func() error {
			st, err := s.sdk.ExecStream(ctx, "acme", "dev", s.rid, req)
			if err != nil {
				return err
			}
			exit, err := st.Wait(nil, nil)
			if err == nil && exit.Code != 0 {
				err = fmt.Errorf("exit %+v", exit)
			}
			return err
		})
	})
	b.Run("docker-exec", func(b *testing.B) {
		median := testenv.BenchLatency(b, func() error { return testenv.DockerExec(s.cid, "true") })
		if apiMedian > 0 {
			b.ReportMetric(median/apiMedian, "x-api")
		}
	})
}

// BenchmarkSpawnInSandbox measures what a sandbox costs a spawn itself,
// apart from paddock: one shell loop of 2,000 spawns of `true`, the same
// static busybox binary (the test image's is this host's), run on this
// host and, through one exec, in a sandbox, the two alternated each
// iteration. It reports the mean spawn of each loop at their medians
// (host-µs, sandbox-µs) and their ratio (x-host): the share of the exec
// floor's gap that is the sandbox's hardening (seccomp, namespaces,
// cgroups), not paddock's path to it.
//
//	go test -run '^$' -bench SpawnInSandbox -benchtime 10x ./internal/e2e
func BenchmarkSpawnInSandbox(b *testing.B) {
	s := defaultSandbox(b)
	ctx := context.Background()
	const spawns = 2000
	loop := fmt.Sprintf("i=0; while [ $i -lt %d ]; do /bin/busybox true; i=$((i+1)); done", spawns)
	var host, inside []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if out, err := exec.Command("/bin/busybox", "sh", "-c", loop).CombinedOutput(); err != nil {
			b.Fatalf("the host's loop: %v: %s", err, out)
		}
		host = append(host, time.Since(t0)/spawns)
		t0 = time.Now()
		res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sh", "-c", loop}})
		if err == nil && (res.Exit == nil || res.Exit.Code != 0) {
			err = fmt.Errorf("exit %+v: %s", res.Exit, res.Stderr)
		}
		if err != nil {
			b.Fatalf("the sandbox's loop: %v", err)
		}
		inside = append(inside, time.Since(t0)/spawns)
	}
	median := func(d []time.Duration) float64 { return float64(testenv.Quantile(d, 0.5).Nanoseconds()) / 1e3 }
	h, in := median(host), median(inside)
	b.ReportMetric(h, "host-µs")
	b.ReportMetric(in, "sandbox-µs")
	b.ReportMetric(in/h, "x-host")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFileTransfer moves one file up to and down from a sandbox's
// workspace through the API (the Go SDK, PUT and GET …/files), and the
// same file with `docker exec -i CONTAINER sh -c 'cat > f'` and `docker
// exec CONTAINER cat f`, in the same run. Its floor is cat on this host,
// into and out of the directory the engine mounts as the workspace. An
// upload writes a new file; the replace ways write over the file they wrote
// the time before (cat truncating it, the API renaming a new file over it,
// as it does for every upload). Each
// reports the median and 99th-percentile transfer in MB/s; the API's also
// how many times faster than docker exec it is (x-docker) and how many
// times slower than the floor (x-floor), by their medians. The file is 64
// MiB; PADDOCK_BENCH_FILE_MB sets another size (256 and 1024 in
// docs/BENCHMARKS.md).
//
//	go test -run '^$' -bench FileTransfer -benchtime 10x ./internal/e2e
func BenchmarkFileTransfer(b *testing.B) {
	s := defaultSandbox(b)
	ctx := context.Background()
	size := testenv.BenchFileSize(b)
	hostDir, owner := workspaceSource(b, s)
	src := testenv.WritePatternFile(b, b.TempDir(), size)
	// Every download reads the same file, put there from the host first.
	const down = "/workspace/bench-down.bin"
	if err := testenv.HostCat("", filepath.Join(hostDir, filepath.Base(down)), src); err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(hostDir, filepath.Base(down)), 0o644); err != nil {
		b.Fatal(err)
	}
	medians := map[string]time.Duration{}
	bench := func(name string, reset, op func() error) {
		b.Run(name, func(b *testing.B) {
			d := testenv.BenchThroughput(b, size, reset, op)
			medians[name] = d
			api, dir, _ := strings.Cut(name, "/")
			if api != "api" || d <= 0 {
				return
			}
			if docker := medians["docker/"+dir]; docker > 0 {
				b.ReportMetric(docker.Seconds()/d.Seconds(), "x-docker")
			}
			if floor := medians["floor/"+dir]; floor > 0 {
				b.ReportMetric(d.Seconds()/floor.Seconds(), "x-floor")
			}
		})
	}
	// An upload writes a new file: the sample before's is removed first,
	// untimed. Replacing a file costs ext4 the freeing of the old one's
	// blocks, which each way pays in its own manner (cat truncates, the
	// API renames a new file over it), so the "replace" ways measure that
	// apart, each writing over the file its sample before wrote.
	fresh := func(name string) func() error {
		return func() error {
			if err := os.Remove(filepath.Join(hostDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		}
	}
	apiUpload := func(path string) func() error {
		return func() error {
			f, err := os.Open(src)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = s.sdk.WriteFile(ctx, "acme", "dev", s.rid, path, f, pc.WriteFileOptions{})
			return err
		}
	}
	bench("floor/upload", fresh("floor-up.bin"), func() error { return testenv.HostCat(src, filepath.Join(hostDir, "floor-up.bin")) })
	bench("floor/download", nil, func() error { return testenv.HostCat("", "", filepath.Join(hostDir, filepath.Base(down))) })
	bench("floor/replace", nil, func() error { return testenv.HostCat(src, filepath.Join(hostDir, "floor-re.bin")) })
	bench("docker/upload", fresh("docker-up.bin"), func() error { return testenv.DockerExecCat(s.cid, owner, src, "/workspace/docker-up.bin") })
	bench("docker/download", nil, func() error { return testenv.DockerExecCat(s.cid, owner, "", down) })
	bench("docker/replace", nil, func() error { return testenv.DockerExecCat(s.cid, owner, src, "/workspace/docker-re.bin") })
	bench("api/upload", fresh("api-up.bin"), apiUpload("/workspace/api-up.bin"))
	bench("api/replace", nil, apiUpload("/workspace/api-re.bin"))
	buf := make([]byte, 256<<10)
	bench("api/download", nil, func() error {
		r, err := s.sdk.ReadFile(ctx, "acme", "dev", s.rid, down)
		if err != nil {
			return err
		}
		defer r.Close()
		n, err := io.CopyBuffer(io.Discard, r, buf)
		if err == nil && n != size {
			err = fmt.Errorf("read %d of %d bytes", n, size)
		}
		return err
	})
}

// workspaceSource returns the host directory the engine mounts as the
// sandbox's /workspace, and its owner ("uid:gid"), the user the file API
// writes as.
func workspaceSource(b *testing.B, s *sandbox) (dir, owner string) {
	ins, err := s.docker.ContainerInspect(context.Background(), s.cid)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range ins.Mounts {
		if m.Destination != "/workspace" || m.Source == "" {
			continue
		}
		fi, err := os.Stat(m.Source)
		if err != nil {
			b.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		return m.Source, fmt.Sprintf("%d:%d", st.Uid, st.Gid)
	}
	b.Skip("the sandbox's /workspace is no host directory")
	return "", ""
}
