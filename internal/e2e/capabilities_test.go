package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestCapabilitiesOnDocker installs a capability from the built-in catalog
// and one pushed to the org's inventory on a runtime of the test image,
// and follows them into the sandbox: files materialized where harnesses
// read them, setup run, a worker running and one crashed, a failing check
// visible through the API — and all of it again in the sandbox a reset
// and a start give the runtime.
func TestCapabilitiesOnDocker(t *testing.T) {
	s := runningSandbox(t)
	env := s.env

	// The catalog and the inventory.
	var catalog pc.List[pc.CapabilityVersion]
	env.Must(t, 200, "GET", "/api/v1/catalog", nil).Decode(t, &catalog)
	if len(catalog.Items) < 2 {
		t.Fatalf("catalog: %+v", catalog.Items)
	}
	var pushed pc.CapabilityVersion
	bundle := bundleOf(t, "testdata/capabilities/e2e-workers")
	env.MustRaw(t, 201, "POST", "/api/v1/org/acme/capabilities", "application/gzip", bundle).Decode(t, &pushed)
	if pushed.Name != "e2e-workers" || pushed.Version != "0.1.0" || len(pushed.Contents.Workers) != 2 {
		t.Fatalf("pushed: %+v", pushed)
	}
	// The same bundle again is the same version; a broken one is refused
	// with every problem named.
	env.MustRaw(t, 200, "POST", "/api/v1/org/acme/capabilities", "application/gzip", bundle)
	broken := tarGz(t, map[string]string{"capability.yaml": "schema_version: 1\nname: Bad Name\nversion: one\nworkers:\n  - run: x\n"})
	res := env.MustRaw(t, 400, "POST", "/api/v1/org/acme/capabilities", "application/gzip", broken)
	if res.Code() != "invalid_capability" || !strings.Contains(string(res.Body), "version") || !strings.Contains(string(res.Body), "name") {
		t.Fatalf("broken bundle: %s", res.Body)
	}

	// Install both on the running runtime.
	var repo, workers pc.CapabilityBinding
	env.Must(t, 201, "POST", s.rtPath+"/capabilities", pc.InstallCapabilityRequest{Name: "repo-tools", Source: "catalog"}).Decode(t, &repo)
	env.Must(t, 201, "POST", s.rtPath+"/capabilities", pc.InstallCapabilityRequest{Name: "e2e-workers"}).Decode(t, &workers)
	if repo.Source != "catalog" || workers.Source != "inventory" || workers.Version != "0.1.0" {
		t.Fatalf("bindings: %+v %+v", repo, workers)
	}
	if res := env.Do(t, "POST", s.rtPath+"/capabilities", pc.InstallCapabilityRequest{Name: "repo-tools"}); res.Status != 409 || res.Code() != "capability_already_installed" {
		t.Fatalf("installed twice: %d %s", res.Status, res.Body)
	}
	if res := env.Do(t, "POST", s.rtPath+"/capabilities", pc.InstallCapabilityRequest{Name: "no-such-thing"}); res.Status != 404 || res.Code() != "capability_not_found" {
		t.Fatalf("unknown capability: %d %s", res.Status, res.Body)
	}
	// An inventory version in use cannot be deleted.
	if res := env.Do(t, "DELETE", "/api/v1/org/acme/capabilities/e2e-workers/0.1.0", nil); res.Status != 409 || res.Code() != "capability_in_use" {
		t.Fatalf("delete in use: %d %s", res.Status, res.Body)
	}

	applied := waitApplied(t, env, s.rtPath, 2)
	checkWorkersAndChecks(t, env, s, applied, workers.ID)
	checkMaterialized(t, s)

	var resolved pc.ResolvedCapabilities
	env.Must(t, 200, "GET", s.rtPath+"/capabilities/resolved", nil).Decode(t, &resolved)
	if len(resolved.Bindings) != 2 || len(resolved.Agents) == 0 || len(resolved.Conflicts) != 0 || resolved.Path != "/workspace/.paddock/capabilities" {
		t.Fatalf("resolved: %+v", resolved)
	}

	// The runtime says what went wrong.
	var got pc.Runtime
	env.Must(t, 200, "GET", s.rtPath, nil).Decode(t, &got)
	problems := strings.Join(got.CapabilityProblems, "\n")
	if !strings.Contains(problems, "e2e-workers: check fails failed (exit 7)") || !strings.Contains(problems, "e2e-workers: worker crasher exited (exit 3)") ||
		strings.Contains(problems, "passes") {
		t.Fatalf("capability problems: %q", got.CapabilityProblems)
	}

	// Another binding changes: what e2e-workers' setup made in its
	// directory stays, and its worker keeps running.
	env.Must(t, 200, "PATCH", s.rtPath+"/capabilities/"+repo.ID, pc.UpdateBindingRequest{Enabled: ptr(false)})
	testenv.WaitFor(t, "the disabled agent to leave the sandbox", func() bool {
		res, err := s.sdk.Exec(bounded(t), "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"test", "-e", "/workspace/.claude/agents/code-reviewer.md"}})
		return err == nil && res.Exit != nil && res.Exit.Code != 0
	})
	if got := s.run(t, "cat", "/workspace/.paddock/capabilities/e2e-workers/built"); got != "built\n" {
		t.Fatalf("setup's output after another binding changed: %q", got)
	}
	// Its directory goes in the same apply, after the agent file.
	testenv.WaitFor(t, "the disabled capability's directory to leave the sandbox", func() bool {
		res, err := s.sdk.Exec(bounded(t), "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"test", "-e", "/workspace/.paddock/capabilities/repo-tools"}})
		return err == nil && res.Exit != nil && res.Exit.Code != 0
	})
	beat := s.run(t, "cat", "/workspace/heartbeat")
	testenv.WaitFor(t, "the heartbeat worker to keep beating", func() bool { return s.run(t, "cat", "/workspace/heartbeat") != beat })
	env.Must(t, 200, "PATCH", s.rtPath+"/capabilities/"+repo.ID, pc.UpdateBindingRequest{Enabled: ptr(true)})
	checkMaterialized(t, s)

	// Paused and resumed: the set is applied again, and what setup made
	// stays, its worker with it.
	env.Must(t, 200, "POST", s.rtPath+"/pause", nil)
	env.Must(t, 200, "POST", s.rtPath+"/resume", nil)
	env.Bindings.Wait(bounded(t), s.rid)
	if got := s.run(t, "cat", "/workspace/.paddock/capabilities/e2e-workers/built"); got != "built\n" {
		t.Fatalf("setup's output after a resume: %q", got)
	}
	beat = s.run(t, "cat", "/workspace/heartbeat")
	testenv.WaitFor(t, "the heartbeat worker to beat after the resume", func() bool { return s.run(t, "cat", "/workspace/heartbeat") != beat })

	// Disabled while paused: at the resume its worker stops.
	env.Must(t, 200, "POST", s.rtPath+"/pause", nil)
	env.Must(t, 200, "PATCH", s.rtPath+"/capabilities/"+workers.ID, pc.UpdateBindingRequest{Enabled: ptr(false)})
	env.Must(t, 200, "POST", s.rtPath+"/resume", nil)
	testenv.WaitFor(t, "the heartbeat worker to stop", func() bool {
		return !strings.Contains(s.run(t, "ps", "-o", "args"), "/workspace/heartbeat")
	})

	// A reset with a wiped workspace and a new start: the bindings stay
	// with the runtime and come back into the new sandbox.
	env.Must(t, 200, "PATCH", s.rtPath+"/capabilities/"+workers.ID, pc.UpdateBindingRequest{Enabled: ptr(true)})
	env.Must(t, 200, "POST", s.rtPath+"/reset", pc.ResetRequest{WipeWorkspace: true})
	var rt pc.Runtime
	env.Must(t, 200, "POST", s.rtPath+"/start", nil).Decode(t, &rt)
	applied = waitApplied(t, env, s.rtPath, 2)
	for _, b := range applied {
		if b.Status.SandboxID != rt.CurrentSandboxID {
			t.Fatalf("binding %s applied to %s, not the new sandbox %s", b.Name, b.Status.SandboxID, rt.CurrentSandboxID)
		}
	}
	checkMaterialized(t, s)
	checkWorkersAndChecks(t, env, s, applied, workers.ID)

	// Uninstalled: gone from the runtime and from the sandbox.
	env.Must(t, 204, "DELETE", s.rtPath+"/capabilities/"+repo.ID, nil)
	testenv.WaitFor(t, "the uninstalled agent to leave the sandbox", func() bool {
		res, err := s.sdk.Exec(bounded(t), "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"test", "-e", "/workspace/.claude/agents/code-reviewer.md"}})
		return err == nil && res.Exit != nil && res.Exit.Code != 0
	})
}

// waitApplied waits until n bindings of the runtime have been applied
// (or failed) to its current sandbox, and returns them.
func waitApplied(t *testing.T, env *servertest.Env, rtPath string, n int) []pc.CapabilityBinding {
	t.Helper()
	var out pc.List[pc.CapabilityBinding]
	var rt pc.Runtime
	testenv.WaitFor(t, "the bindings to be applied", func() bool {
		env.Must(t, 200, "GET", rtPath, nil).Decode(t, &rt)
		env.Must(t, 200, "GET", rtPath+"/capabilities", nil).Decode(t, &out)
		done := 0
		for _, b := range out.Items {
			if b.Status != nil && b.Status.SandboxID == rt.CurrentSandboxID && b.Status.State != pc.BindingPending {
				done++
			}
		}
		return done == n
	})
	return out.Items
}

// checkWorkersAndChecks: the setup ran, the heartbeat worker runs, the
// crasher shows exited with its code and output, and the failing check is
// visible with its exit code and output.
func checkWorkersAndChecks(t *testing.T, env *servertest.Env, s *sandbox, applied []pc.CapabilityBinding, id string) {
	t.Helper()
	var b pc.CapabilityBinding
	for _, a := range applied {
		if a.ID == id {
			b = a
		}
	}
	if b.Status == nil || b.Status.State != pc.BindingApplied || len(b.Status.Setup) != 1 || !b.Status.Setup[0].OK {
		t.Fatalf("e2e-workers status: %+v", b.Status)
	}
	if got := s.run(t, "cat", "/workspace/.e2e-setup"); got != "ready\n" {
		t.Fatalf("setup wrote %q", got)
	}
	checks := map[string]pc.StepResult{}
	for _, c := range b.Status.Checks {
		checks[c.Name] = c
	}
	if !checks["passes"].OK || checks["fails"].OK || checks["fails"].ExitCode != 7 || !strings.Contains(checks["fails"].Output, "is missing") {
		t.Fatalf("checks: %+v", b.Status.Checks)
	}
	// The crasher is seen exited once it has; the heartbeat keeps writing.
	var list pc.List[pc.CapabilityBinding]
	testenv.WaitFor(t, "the crashed worker to show", func() bool {
		env.Must(t, 200, "GET", s.rtPath+"/capabilities", nil).Decode(t, &list)
		for _, x := range list.Items {
			if x.ID != id {
				continue
			}
			for _, w := range x.Status.Workers {
				if w.Name == "crasher" && w.State == pc.WorkerExited && w.ExitCode != nil && *w.ExitCode == 3 &&
					strings.Contains(w.Output, "crashing on purpose") {
					return true
				}
			}
		}
		return false
	})
	for _, x := range list.Items {
		for _, w := range x.Status.Workers {
			if w.Name == "heartbeat" && w.State != pc.WorkerRunning {
				t.Fatalf("heartbeat worker: %+v", w)
			}
		}
	}
	first := s.run(t, "cat", "/workspace/heartbeat")
	testenv.WaitFor(t, "the heartbeat worker to write again", func() bool { return s.run(t, "cat", "/workspace/heartbeat") != first })
}

// checkMaterialized: the catalog's repo-tools is in the sandbox, in the
// layout harnesses read.
func checkMaterialized(t *testing.T, s *sandbox) {
	t.Helper()
	testenv.WaitFor(t, "the capability files", func() bool {
		res, err := s.sdk.Exec(bounded(t), "acme", "dev", s.rid, pc.ExecRequest{Argv: []string{"test", "-f", "/workspace/.claude/agents/code-reviewer.md"}})
		return err == nil && res.Exit != nil && res.Exit.Code == 0
	})
	s.run(t, "test", "-f", "/workspace/.paddock/capabilities/repo-tools/capability.yaml")
	s.run(t, "test", "-x", "/workspace/.paddock/capabilities/bin/repo-map")
	s.run(t, "test", "-f", "/workspace/.claude/skills/repo-map/SKILL.md")
	var mcp struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(s.run(t, "cat", "/workspace/.paddock/capabilities/mcp.json")), &mcp); err != nil {
		t.Fatalf("mcp.json: %v", err)
	}
	// The repo-map tool runs in the sandbox.
	if out := s.run(t, "/workspace/.paddock/capabilities/bin/repo-map", "/workspace"); out == "" {
		t.Fatal("repo-map printed nothing")
	}
}

// TestPromptsAndSessions runs prompts through the stand-in harness CLIs of
// the test image: refused at once without the model credential, streamed
// as NDJSON in the common schema with it, kept as the session's
// transcript, and resumed across a reset.
func TestPromptsAndSessions(t *testing.T) {
	env, docker, p, rtPath := dockerEnv(t)
	s := startSandbox(t, env, docker, p, rtPath)

	// No credential: refused before anything runs, naming the variable.
	res := env.Do(t, "POST", rtPath+"/prompt", pc.PromptRequest{Prompt: "hello"})
	if res.Status != 422 || res.Code() != "harness_secret_missing" || !strings.Contains(string(res.Body), "ANTHROPIC_API_KEY") {
		t.Fatalf("prompt without a credential: %d %s", res.Status, res.Body)
	}
	if res := env.Do(t, "POST", rtPath+"/prompt", pc.PromptRequest{Prompt: "hi", Harness: "nope"}); res.Status != 400 || res.Code() != "unknown_harness" {
		t.Fatalf("unknown harness: %d %s", res.Status, res.Body)
	}

	// A credential bound to the runtime reaches the next sandbox.
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/secrets", pc.CreateSecretRequest{Name: "anthropic", Env: "ANTHROPIC_API_KEY", Value: "sk-test-not-real"})
	env.Must(t, 200, "PATCH", rtPath, pc.RuntimePatch{Secrets: &[]string{"anthropic"}})
	env.Must(t, 200, "POST", rtPath+"/reset", nil)
	env.Must(t, 200, "POST", rtPath+"/start", nil)

	events := promptStream(t, env, rtPath, pc.PromptRequest{Prompt: "list the workspace please"})
	types := []string{}
	for _, e := range events {
		types = append(types, e.Type)
	}
	joined := strings.Join(types, ",")
	for _, want := range []string{"message", "tool_call", "tool_result", "usage", "done"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("events %s lack %s: %+v", joined, want, events)
		}
	}
	if events[0].Role != "user" || events[0].Text != "list the workspace please" || events[len(events)-1].Type != "done" {
		t.Fatalf("first and last events: %+v … %+v", events[0], events[len(events)-1])
	}
	done := events[len(events)-1].Done
	if done == nil || done.ExitCode != 0 || done.HarnessSessionID == "" {
		t.Fatalf("done: %+v", done)
	}
	var sessions pc.List[pc.Session]
	env.Must(t, 200, "GET", rtPath+"/sessions", nil).Decode(t, &sessions)
	if len(sessions.Items) != 1 || sessions.Items[0].Turns != 1 || sessions.Items[0].Status != "completed" || sessions.Items[0].Harness != "claude-code" {
		t.Fatalf("sessions: %+v", sessions.Items)
	}
	sess := sessions.Items[0]

	// Reset: a new sandbox, the same session, the harness's own
	// conversation resumed from the workspace.
	env.Must(t, 200, "POST", rtPath+"/reset", nil)
	env.Must(t, 200, "POST", rtPath+"/start", nil)
	var second pc.PromptResult
	env.Must(t, 200, "POST", rtPath+"/prompt", pc.PromptRequest{Prompt: "and now?", SessionID: sess.ID}).Decode(t, &second)
	if !strings.Contains(second.Result, "previous prompt: list the workspace please") || second.Session.Turns != 2 || second.Session.ID != sess.ID {
		t.Fatalf("resumed turn: %+v", second)
	}
	var transcript pc.SessionTranscript
	env.Must(t, 200, "GET", rtPath+"/sessions/"+sess.ID, nil).Decode(t, &transcript)
	if len(transcript.Events) != len(events)+len(second.Events) || transcript.Events[len(events)].Turn != 2 {
		t.Fatalf("transcript of %d events, want %d", len(transcript.Events), len(events)+len(second.Events))
	}
	for i, e := range transcript.Events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	// Paused, then archived (the compute released): the next prompt wakes
	// the runtime, restoring it, and the conversation goes on.
	env.Must(t, 200, "POST", rtPath+"/pause", nil)
	archived, err := env.Runtimes.ArchiveIfDue(bounded(t), p.RuntimeID, time.Now().Add(48*time.Hour))
	if err != nil || !archived {
		t.Fatalf("archive: %v %v", archived, err)
	}
	var third pc.PromptResult
	env.Must(t, 200, "POST", rtPath+"/prompt", pc.PromptRequest{Prompt: "still there?", SessionID: sess.ID}).Decode(t, &third)
	if !strings.Contains(third.Result, "previous prompt: and now?") || third.Session.Turns != 3 {
		t.Fatalf("the turn after an archive: %+v", third)
	}
	// A failing turn fails the session's turn, with an error event.
	var failed pc.PromptResult
	env.Must(t, 200, "POST", rtPath+"/prompt", pc.PromptRequest{Prompt: "please [fail]", SessionID: sess.ID}).Decode(t, &failed)
	if failed.Error == "" || failed.Session.Status != "failed" {
		t.Fatalf("failed turn: %+v", failed)
	}
	// A task is a session of its own; it cannot continue one.
	var task pc.PromptResult
	env.Must(t, 200, "POST", rtPath+"/task", pc.PromptRequest{Prompt: "one-off"}).Decode(t, &task)
	if task.Session.Kind != "task" || task.Session.ID == sess.ID {
		t.Fatalf("task: %+v", task.Session)
	}
	if res := env.Do(t, "POST", rtPath+"/task", pc.PromptRequest{Prompt: "x", SessionID: sess.ID}); res.Status != 400 {
		t.Fatalf("task with a session: %d %s", res.Status, res.Body)
	}
	if res := env.Do(t, "GET", rtPath+"/sessions/00000000-0000-0000-0000-000000000000", nil); res.Status != 404 || res.Code() != "session_not_found" {
		t.Fatalf("unknown session: %d %s", res.Status, res.Body)
	}
	_ = s
}

// promptStream runs a prompt with NDJSON and returns its events.
func promptStream(t *testing.T, env *servertest.Env, rtPath string, req pc.PromptRequest) []pc.SessionEvent {
	t.Helper()
	body, _ := json.Marshal(req)
	hr, _ := http.NewRequestWithContext(bounded(t), "POST", env.URL+rtPath+"/prompt", bytes.NewReader(body))
	hr.Header.Set("Authorization", "Bearer "+env.Key)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("prompt stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []pc.SessionEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e pc.SessionEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("event %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		t.Fatal("no events")
	}
	return out
}

// bundleOf tars and gzips a capability directory, modes kept.
func bundleOf(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: int64(info.Mode().Perm()), Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ptr[T any](v T) *T { return &v }
