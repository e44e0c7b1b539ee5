package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/harness/harnesstest"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

// harnessCLIs are the harness CLIs by the name the dev.paddock.harnesses
// label gives them: their command and their npm package in the
// all-harness image.
var harnessCLIs = map[string]struct{ command, pkg string }{
	"claude-code": {"claude", "@anthropic-ai/claude-code"},
	"codex":       {"codex", "@openai/codex"},
	"opencode":    {"opencode", "opencode-ai"},
	"gemini":      {"gemini", "@google/gemini-cli"},
	"kimi":        {"kimi", "@moonshot-ai/kimi-code"},
}

// harnessLabel reads an image's dev.paddock.harnesses label: name=version
// pairs, comma-separated.
func harnessLabel(t *testing.T, image string) map[string]string {
	t.Helper()
	in, err := testenv.DockerClient(t).ImageInspect(t.Context(), image)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := in.Config.Labels["dev.paddock.harnesses"]
	if !ok {
		t.Fatalf("%s has no dev.paddock.harnesses label", image)
	}
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		name, version, ok := strings.Cut(pair, "=")
		if !ok || name == "" || version == "" {
			t.Fatalf("%s: dev.paddock.harnesses=%q: %q is not name=version", image, v, pair)
		}
		out[name] = version
	}
	return out
}

// TestHarnessCLIAllHarnessImage: in a sandbox of the all-harness image,
// without network and without credentials, every harness CLI the image's
// label lists is installed at that version, answers --version with it,
// and its non-interactive mode parses its arguments and gets as far as
// the credentials or the network — never a usage error, never a hang.
func TestHarnessCLIAllHarnessImage(t *testing.T) {
	testenv.RequireDocker(t, testenv.AllHarnessImage)
	label := harnessLabel(t, testenv.AllHarnessImage)
	if got, want := slices.Sorted(maps.Keys(label)), slices.Sorted(maps.Keys(harnessCLIs)); !slices.Equal(got, want) {
		t.Fatalf("dev.paddock.harnesses lists %v, want %v", got, want)
	}
	c := imageSandbox(t, testenv.AllHarnessImage, provider.Resources{
		CPUMillis: 2000, MemoryMB: 4096, PidsLimit: 2048, DiskMB: 256, TmpMB: 256,
	})

	for name, version := range label {
		cli := harnessCLIs[name]
		t.Run(name+"/version", func(t *testing.T) {
			code, out, errOut := sandboxRun(t, c, time.Minute, "cat", "/opt/paddock/harnesses/lib/node_modules/"+cli.pkg+"/package.json")
			if code != 0 || !strings.Contains(out, `"version": "`+version+`"`) {
				t.Fatalf("%s's package.json (exit %d) does not say version %s:\n%.300s%s", cli.pkg, code, version, out, errOut)
			}
			code, out, errOut = sandboxRun(t, c, time.Minute, cli.command, "--version")
			t.Logf("%s --version: exit %d: %s%s", cli.command, code, strings.TrimSpace(out), strings.TrimSpace(errOut))
			if code != 0 || !strings.Contains(out, version) {
				t.Fatalf("%s --version exited %d printing %q, want %s", cli.command, code, out+errOut, version)
			}
		})
	}

	// Each non-interactive run, all at once; a run still going after its
	// bound is killed (a CLI without credentials that has a free default
	// model retries its connection for good).
	for _, tc := range nonInteractiveRuns {
		t.Run(tc.name+"/resume unknown", func(t *testing.T) {
			t.Parallel()
			resumeUnknown(t, c, tc.harness)
		})
		t.Run(tc.name+"/non-interactive", func(t *testing.T) {
			t.Parallel()
			runNonInteractive(t, c, tc)
		})
	}
}

// nonInteractiveRun is one harness CLI run as the registry runs it,
// without credentials.
type nonInteractiveRun struct {
	name    string
	harness string // its argv and environment are the registry's
	bound   time.Duration
	// check judges the run: its exit, whether the bound killed it, its
	// output.
	check func(code int, killed bool, stdout, stderr string) string
}

// nonInteractiveRuns are the real CLIs' non-interactive runs and how each
// must end.
var nonInteractiveRuns = []nonInteractiveRun{
	{
		name:    "claude-code",
		harness: "claude-code",
		// It ends by itself: the bound is for a loaded machine.
		bound: 3 * time.Minute,
		check: func(code int, killed bool, stdout, _ string) string {
			if killed || code == 0 || !strings.Contains(stdout, `"type":"system","subtype":"init"`) || !strings.Contains(stdout, `"authentication_failed"`) {
				return "want the init event, then a failed result for want of authentication"
			}
			return ""
		},
	},
	{
		name:    "codex",
		harness: "codex",
		// Its first failure to reach the API comes seconds after it
		// starts, and it then retries until killed.
		bound: 90 * time.Second,
		check: func(_ int, _ bool, stdout, _ string) string {
			if !strings.Contains(stdout, `"type":"thread.started"`) || !strings.Contains(stdout, `"type":"turn.started"`) ||
				!strings.Contains(stdout, "failed to lookup address") {
				return "want the thread and turn started, then failures to reach the API"
			}
			return ""
		},
	},
	{
		name:    "gemini",
		harness: "gemini",
		// It ends by itself: the bound is for a loaded machine.
		bound: 3 * time.Minute,
		check: func(code int, killed bool, stdout, stderr string) string {
			if killed || code == 0 || !strings.Contains(stdout+stderr, "Auth method") {
				return "want a refusal for want of an auth method"
			}
			return ""
		},
	},
	{
		name:    "opencode",
		harness: "opencode",
		bound:   30 * time.Second,
		// Past its arguments it retries the model's API for good,
		// silently without --print-logs: killed at the bound.
		check: func(_ int, killed bool, stdout, stderr string) string {
			if !killed && !strings.Contains(stdout+stderr, "Cannot connect to API") {
				return "want it to keep trying the model's API until killed"
			}
			return ""
		},
	},
	{
		name:    "kimi",
		harness: "kimi",
		// It ends by itself: the bound is for a loaded machine.
		bound: 3 * time.Minute,
		check: func(code int, killed bool, stdout, stderr string) string {
			if killed || code == 0 || !strings.Contains(stdout, `"type":"system.version"`) || !strings.Contains(stdout+stderr, "no credential configured") {
				return "want the version event, then a refusal for want of a credential"
			}
			return ""
		},
	},
}

// runNonInteractive runs tc's CLI in the sandbox c is the agent of, and
// its output through the registry's parser.
func runNonInteractive(t *testing.T, c *agentconn.Client, tc nonInteractiveRun) {
	ctx, cancel := context.WithTimeout(t.Context(), tc.bound+time.Minute)
	defer cancel()
	h, ok := harness.Lookup(tc.harness)
	if !ok {
		t.Fatalf("no harness %s", tc.harness)
	}
	argv, env := h.Command(harness.Invocation{Prompt: "hi", Workdir: "/workspace", CapRoot: capability.Root})
	start := time.Now()
	res, err := c.Run(ctx, agentconn.ExecRequest{Argv: argv, Env: env, Cwd: "/workspace", Timeout: tc.bound})
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	stdout, stderr := string(res.Stdout), string(res.Stderr)
	t.Logf("%s: exit %d, killed at its bound: %v, after %s\nstdout (end):\n%s\nstderr (end):\n%s",
		strings.Join(argv, " "), res.Exit.Code, res.Exit.TimedOut, time.Since(start).Round(100*time.Millisecond), lastBytes(stdout, 1500), lastBytes(stderr, 1500))
	for _, usage := range []string{"Usage:", "unknown option", "unexpected argument", "Unknown argument", "error: unrecognized"} {
		if strings.Contains(stdout+stderr, usage) {
			t.Errorf("%s printed a usage error (%q)", argv[0], usage)
		}
	}
	if msg := tc.check(res.Exit.Code, res.Exit.TimedOut, stdout, stderr); msg != "" {
		t.Errorf("%s: %s", strings.Join(argv, " "), msg)
	}
	// The registry's parser reads what the real CLI printed: the
	// turn ends with done, failed, and never a parse of nothing.
	p := h.NewParser()
	var events []harness.Event
	for _, line := range strings.Split(stdout, "\n") {
		events = append(events, p.Feed([]byte(line))...)
	}
	events = append(events, p.Finish(res.Exit.Code, stderr)...)
	last := events[len(events)-1]
	if last.Type != harness.EventDone || last.Done.ExitCode == 0 {
		t.Errorf("%s's output parsed into %+v, want a failed turn ending with done", tc.harness, events)
	}
	if res.Exit.Code != 0 && !slices.ContainsFunc(events, func(e harness.Event) bool { return e.Type == harness.EventError }) {
		t.Errorf("%s failed (exit %d) and its output parsed into no error event: %+v", tc.harness, res.Exit.Code, events)
	}
}

// resumeUnknown runs each real CLI's resume of a conversation that does not
// exist, as the registry runs it, with a (fake) credential and no network:
// the registry's parser makes it harness_session_not_found with the CLI's
// text (Claude Code 2.1.332 says so in its result's errors[]).
func resumeUnknown(t *testing.T, c *agentconn.Client, name string) {
	t.Helper()
	h, ok := harness.Lookup(name)
	if !ok {
		t.Fatalf("no harness %s", name)
	}
	id := harnesstest.UnknownResumeID(name)
	argv, env := h.Command(harness.Invocation{Prompt: "hi", ResumeID: id, Workdir: "/workspace", CapRoot: capability.Root})
	env = maps.Clone(env)
	env[h.Secrets[0]] = "not-a-real-key"
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	res, err := c.Run(ctx, agentconn.ExecRequest{Argv: argv, Env: env, Cwd: "/workspace", Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	p := h.NewParser()
	var events []harness.Event
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		events = append(events, p.Feed([]byte(line))...)
	}
	events = append(events, p.Finish(res.Exit.Code, string(res.Stderr))...)
	// OpenCode and Gemini CLI do not repeat the id.
	named := name == "opencode" || name == "gemini"
	i := slices.IndexFunc(events, func(e harness.Event) bool { return e.Type == harness.EventError })
	if i >= 0 {
		t.Logf("%s: %s: %s", name, events[i].Error.Code, events[i].Error.Message)
		named = named || strings.Contains(events[i].Error.Message, id)
	}
	if i < 0 || events[i].Error.Code != harness.CodeSessionNotFound || !named {
		t.Errorf("%s: exit %d, events %+v, want %s naming %s\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), res.Exit.Code, events,
			harness.CodeSessionNotFound, id, lastBytes(string(res.Stdout), 1500), lastBytes(string(res.Stderr), 1500))
	}
}

func lastBytes(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestHarnessCLIStandIns: the test image carries a stand-in under each
// harness CLI's name, and says so in its label.
func TestHarnessCLIStandIns(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	label := harnessLabel(t, testenv.TestImage)
	if got, want := slices.Sorted(maps.Keys(label)), slices.Sorted(maps.Keys(harnessCLIs)); !slices.Equal(got, want) {
		t.Fatalf("dev.paddock.harnesses lists %v, want %v", got, want)
	}
	c := imageSandbox(t, testenv.TestImage, provider.Resources{CPUMillis: 500, MemoryMB: 128, PidsLimit: 64, DiskMB: 32, TmpMB: 32})
	for name, version := range label {
		if version != "standin" {
			t.Errorf("the test image's %s is %q, want standin", name, version)
		}
		cmd := harnessCLIs[name].command
		code, out, errOut := sandboxRun(t, c, 2*time.Minute, cmd, "--version")
		if code != 0 || !strings.Contains(out+errOut, "(paddock stand-in)") {
			t.Errorf("%s --version: exit %d: %q, want (paddock stand-in)", cmd, code, out+errOut)
		}
	}
}
