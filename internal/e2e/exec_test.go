package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// sandbox is a running runtime on Docker, reached through the API and
// the SDK.
type sandbox struct {
	env       *servertest.Env
	docker    *client.Client
	sdk       *pc.Client
	transport *http.Transport // the SDK's, so a test can drop its connections
	rtPath    string
	rid       string
	cid       string // the container
}

// runningSandbox starts the runtime of a dockerEnv (half a CPU, 128 MiB)
// and returns it.
func runningSandbox(t testing.TB) *sandbox {
	t.Helper()
	env, docker, p, rtPath := dockerEnv(t)
	return startSandbox(t, env, docker, p, rtPath)
}

// defaultSandbox is runningSandbox with a project of the installation's
// default resources (one CPU, 1 GiB): half a CPU throttles bursts, which
// would measure the limit rather than paddock.
func defaultSandbox(t testing.TB) *sandbox {
	t.Helper()
	env, docker, _, _ := dockerEnv(t)
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: "p2"}).Decode(t, &p)
	return startSandbox(t, env, docker, p, "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID)
}

func startSandbox(t testing.TB, env *servertest.Env, docker *client.Client, p pc.Project, rtPath string) *sandbox {
	t.Helper()
	var rt pc.Runtime
	env.Must(t, 200, "POST", rtPath+"/start", nil).Decode(t, &rt)
	var row pc.Sandbox
	env.Must(t, 200, "GET", "/api/v1/org/acme/sandboxes/"+rt.CurrentSandboxID, nil).Decode(t, &row)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	sdk, err := pc.New(env.URL, env.Key, pc.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	return &sandbox{env: env, docker: docker, sdk: sdk, transport: tr, rtPath: rtPath, rid: p.RuntimeID, cid: row.ProviderSandboxID}
}

// bounded returns a context that ends with the test or after two minutes,
// so that a stream that hangs fails its test instead of stalling the run.
func bounded(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// run runs argv through the API (collected) and fails the test unless it
// exits 0; it returns stdout.
func (s *sandbox) run(t testing.TB, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: argv})
	if err != nil {
		t.Fatalf("exec %q: %v", argv, err)
	}
	if res.Exit == nil || res.Exit.Code != 0 {
		t.Fatalf("exec %q: exit %+v, stderr %q", argv, res.Exit, res.Stderr)
	}
	return string(res.Stdout)
}

// process returns the agent's record of a process.
func (s *sandbox) process(t testing.TB, id string) pc.Process {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := s.sdk.GetProcess(ctx, "acme", "dev", s.rid, id)
	if err != nil {
		t.Fatalf("process %s: %v", id, err)
	}
	return p
}

func TestExec(t *testing.T) {
	s := runningSandbox(t)
	ctx := bounded(t)

	collected := []struct {
		name       string
		req        pc.ExecRequest
		wantOut    string
		wantErr    string
		wantCode   int
		wantSignal string
		timedOut   bool
		truncated  bool
	}{
		{name: "exit code and both streams", req: pc.ExecRequest{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}, wantOut: "out\n", wantErr: "err\n", wantCode: 3},
		{name: "stdin", req: pc.ExecRequest{Argv: []string{"tr", "a-z", "A-Z"}, Stdin: []byte("hello\n")}, wantOut: "HELLO\n"},
		{name: "env and cwd", req: pc.ExecRequest{Argv: []string{"sh", "-c", "echo $GREETING; pwd"}, Env: map[string]string{"GREETING": "hi"}, Cwd: "/tmp"}, wantOut: "hi\n/tmp\n"},
		{name: "binary output", req: pc.ExecRequest{Argv: []string{"printf", `\000\377\n`}}, wantOut: "\x00\xff\n"},
		{name: "timeout", req: pc.ExecRequest{Argv: []string{"sleep", "30"}, TimeoutMS: 200}, wantCode: -1, wantSignal: "SIGKILL", timedOut: true},
		{name: "bounded output", req: pc.ExecRequest{Argv: []string{"head", "-c", "3000000", "/dev/zero"}, MaxOutputBytes: 1000}, wantOut: strings.Repeat("\x00", 1000), truncated: true},
	}
	for _, tt := range collected {
		t.Run("collected/"+tt.name, func(t *testing.T) {
			res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Exit == nil || res.Exit.Code != tt.wantCode || res.Exit.Signal != tt.wantSignal || res.Exit.TimedOut != tt.timedOut {
				t.Fatalf("exit %+v, want code %d signal %q timed out %v", res.Exit, tt.wantCode, tt.wantSignal, tt.timedOut)
			}
			if string(res.Stdout) != tt.wantOut || string(res.Stderr) != tt.wantErr || res.Truncated != tt.truncated {
				t.Fatalf("stdout %q stderr %q truncated %v", res.Stdout, res.Stderr, res.Truncated)
			}
			if tt.truncated && res.Exit.StdoutBytes != 3000000 {
				t.Fatalf("stdout_bytes %d, want the whole 3000000 counted", res.Exit.StdoutBytes)
			}
		})
	}

	t.Run("streamed events in order, flushed as they happen", func(t *testing.T) {
		st, err := s.sdk.ExecStream(ctx, "acme", "dev", s.rid, pc.ExecRequest{
			Argv:      []string{"sh", "-c", `echo one; read line; echo "$line" >&2; echo two; exit 5`},
			OpenStdin: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if st.ID == "" || st.PID == 0 {
			t.Fatalf("started %q %d", st.ID, st.PID)
		}
		// "one" arrives while the process waits for input: the stream is
		// not buffered until the end.
		ev, err := st.Recv()
		if err != nil || ev.Event != pc.EventOutput || ev.Stream != pc.StreamStdout || string(ev.Data) != "one\n" || ev.Offset != 0 {
			t.Fatalf("first event %+v %v", ev, err)
		}
		if n, err := s.sdk.WriteStdin(ctx, "acme", "dev", s.rid, st.ID, strings.NewReader("middle\n"), true); err != nil || n != 7 {
			t.Fatalf("stdin: %d %v", n, err)
		}
		var stdout, stderr bytes.Buffer
		stdout.WriteString("one\n")
		exit, err := st.Wait(&stdout, &stderr)
		if err != nil || exit.Code != 5 || stdout.String() != "one\ntwo\n" || stderr.String() != "middle\n" {
			t.Fatalf("exit %+v %v, stdout %q stderr %q", exit, err, stdout.String(), stderr.String())
		}
		if exit.StdoutBytes != 8 || exit.StderrBytes != 7 {
			t.Fatalf("byte counts %+v", exit)
		}
	})

	t.Run("huge output is streamed, not buffered", func(t *testing.T) {
		const size = 64 << 20
		peak := testenv.HeapPeak()
		st, err := s.sdk.ExecStream(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"head", "-c", strconv.Itoa(size), "/dev/zero"}})
		if err != nil {
			t.Fatal(err)
		}
		var n countingWriter
		exit, err := st.Wait(&n, nil)
		heap := peak()
		if err != nil || exit.Code != 0 || n != size || exit.StdoutBytes != size {
			t.Fatalf("exit %+v %v, %d bytes", exit, err, n)
		}
		t.Logf("%d MiB of output: the heap grew by %d MiB", size>>20, heap>>20)
		if heap > size/2 {
			t.Fatalf("the heap grew by %d MiB for %d MiB of output", heap>>20, size>>20)
		}
	})

	t.Run("a missing command is a clear error, not a hung stream", func(t *testing.T) {
		for _, streamed := range []bool{false, true} {
			req := pc.ExecRequest{Argv: []string{"no-such-command", "--help"}}
			var err error
			if streamed {
				var st *pc.ExecStream
				if st, err = s.sdk.ExecStream(ctx, "acme", "dev", s.rid, req); st != nil {
					st.Close()
				}
			} else {
				_, err = s.sdk.Exec(ctx, "acme", "dev", s.rid, req)
			}
			if !pc.IsCode(err, "command_not_found") || !errors.Is(err, pc.ErrNotFound) {
				t.Fatalf("streamed=%v: %v, want 404 command_not_found", streamed, err)
			}
		}
		_, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"ls"}, Cwd: "/no/such/dir"})
		if !pc.IsCode(err, "invalid_cwd") {
			t.Fatalf("bad cwd: %v", err)
		}
	})

	t.Run("background", func(t *testing.T) {
		res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sh", "-c", "sleep 0.2; echo done"}, Background: true})
		if err != nil || res.ID == "" || res.Exit != nil {
			t.Fatalf("background start %+v %v", res, err)
		}
		st, err := s.sdk.Attach(ctx, "acme", "dev", s.rid, res.ID, pc.AttachOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if exit, err := st.Wait(&out, nil); err != nil || exit.Code != 0 || out.String() != "done\n" {
			t.Fatalf("attached: %+v %v %q", exit, err, out.String())
		}
		if p := s.process(t, res.ID); p.Running || p.Exit == nil || !p.Background || p.StdoutBytes != 5 {
			t.Fatalf("process after exit %+v", p)
		}
	})
}

// TestProcessReattach disconnects from a background process's stream,
// lets it produce more output, and attaches again from the last offset
// read: nothing is lost or repeated, and stdin, signals and the listing
// work through the API.
func TestProcessReattach(t *testing.T) {
	s := runningSandbox(t)
	ctx := bounded(t)

	sctx, cancel := context.WithCancel(ctx)
	st, err := s.sdk.ExecStream(sctx, "acme", "dev", s.rid, pc.ExecRequest{
		Argv:       []string{"sh", "-c", `echo start; read a; echo "got $a"; read b; echo "then $b" >&2; exit 7`},
		OpenStdin:  true,
		Background: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := st.Recv()
	if err != nil || string(ev.Data) != "start\n" {
		t.Fatalf("first event %+v %v", ev, err)
	}
	id := st.ID
	cancel() // the client goes away
	st.Close()

	// The process lives on and takes more input.
	if p := s.process(t, id); !p.Running || !p.Background {
		t.Fatalf("after disconnect %+v, want it running", p)
	}
	if _, err := s.sdk.WriteStdin(ctx, "acme", "dev", s.rid, id, strings.NewReader("A\n"), false); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the second line", func() bool { return s.process(t, id).StdoutBytes == int64(len("start\ngot A\n")) })

	// A replay without follow ends after what is buffered.
	replay, err := s.sdk.Attach(ctx, "acme", "dev", s.rid, id, pc.AttachOptions{NoFollow: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := replay.Wait(&out, nil); !errors.Is(err, pc.ErrNotExited) || out.String() != "start\ngot A\n" {
		t.Fatalf("replay: %v %q", err, out.String())
	}

	// Attach from where the first stream stopped reading.
	follow, err := s.sdk.Attach(ctx, "acme", "dev", s.rid, id, pc.AttachOptions{StdoutOffset: int64(len("start\n"))})
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Close()
	if ev, err := follow.Recv(); err != nil || ev.Offset != 6 || string(ev.Data) != "got A\n" {
		t.Fatalf("reattached at %+v %v", ev, err)
	}
	if _, err := s.sdk.WriteStdin(ctx, "acme", "dev", s.rid, id, strings.NewReader("B\n"), true); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	exit, err := follow.Wait(nil, &stderr)
	if err != nil || exit.Code != 7 || stderr.String() != "then B\n" {
		t.Fatalf("exit %+v %v stderr %q", exit, err, stderr.String())
	}

	// Signals.
	res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"sleep", "1000"}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.sdk.ListProcesses(ctx, "acme", "dev", s.rid)
	if err != nil || !hasRunning(ps, res.ID) {
		t.Fatalf("processes %+v %v, want %s running", ps, err, res.ID)
	}
	if err := s.sdk.SignalProcess(ctx, "acme", "dev", s.rid, res.ID, pc.SignalRequest{Signal: "SIGTERM"}); err != nil {
		t.Fatal(err)
	}
	at, err := s.sdk.Attach(ctx, "acme", "dev", s.rid, res.ID, pc.AttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if exit, err := at.Wait(nil, nil); err != nil || exit.Signal != "SIGTERM" {
		t.Fatalf("after SIGTERM: %+v %v", exit, err)
	}
	err = s.sdk.SignalProcess(ctx, "acme", "dev", s.rid, "p-99999", pc.SignalRequest{Signal: "TERM"})
	if !pc.IsCode(err, "process_not_found") {
		t.Fatalf("signal to an unknown process: %v", err)
	}
	if _, err := s.sdk.GetProcess(ctx, "acme", "dev", s.rid, "p-99999"); !pc.IsCode(err, "process_not_found") {
		t.Fatalf("unknown process: %v", err)
	}

	// Output beyond what the agent keeps is reported as lost on replay.
	res, err = s.sdk.Exec(ctx, "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"head", "-c", "3000000", "/dev/zero"}, Background: true})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "head to exit", func() bool { return !s.process(t, res.ID).Running })
	at, err = s.sdk.Attach(ctx, "acme", "dev", s.rid, res.ID, pc.AttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var lost, kept int64
	for {
		ev, err := at.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lost += ev.Bytes
		kept += int64(len(ev.Data))
	}
	if lost == 0 || lost+kept != 3000000 {
		t.Fatalf("lost %d + kept %d, want some lost and 3000000 in all", lost, kept)
	}
}

func hasRunning(ps []pc.Process, id string) bool {
	for _, p := range ps {
		if p.ID == id && p.Running {
			return true
		}
	}
	return false
}

// countingWriter counts what is written to it.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
