package sdks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// chromium is Debian's Chromium, the browser the console's tests drive
// too; none is downloaded.
const chromium = "/usr/bin/chromium"

// browserScript drives the SDK's browser bundle in a page of the server's
// own origin: an API key for exec (collected and streamed), files and an
// error; then the console's session cookie, as a page signed in to the
// console has it, for a terminal (a browser's WebSocket sends no key) and
// a delete (with the session's CSRF token in the headers option). It
// answers what it saw, as JSON.
const browserScript = `(async () => {
  const m = await import(URL.createObjectURL(new Blob([__BUNDLE__], { type: "text/javascript" })));
  const org = __ORG__, ws = __WS__, key = __KEY__;
  const p = new m.Paddock({ url: location.origin, apiKey: key });
  const proj = await p.createProject(org, ws, { name: "ts-browser", runtime: { cpu_millis: 500, memory_mb: 256 } });
  const id = proj.runtime_id;
  await p.startRuntime(org, ws, id);
  const seen = { exec: (await p.exec(org, ws, id, ["echo", "from a browser"])).stdout, stream: "" };
  const s = await p.execStream(org, ws, id, ["sh", "-c", "printf out; printf err >&2; exit 4"]);
  for await (const ev of s) {
    if (ev.type === "output") seen.stream += ev.stream + ":" + ev.text + " ";
    if (ev.type === "exit") seen.stream += "exit:" + ev.exit.code;
  }
  await p.writeFile(org, ws, id, "/tmp/browser.txt", "written by a page");
  seen.file = await p.readText(org, ws, id, "/tmp/browser.txt");
  try {
    await p.getRuntime(org, ws, "00000000-0000-0000-0000-000000000000");
  } catch (e) {
    seen.error = (e instanceof m.PaddockError) + ":" + e.status + ":" + e.code;
  }
  const signIn = await fetch("/api/v1/console/session", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ key }),
  });
  const session = await signIn.json();
  const c = new m.Paddock({ url: location.origin, headers: { "X-CSRF-Token": session.csrf_token } });
  const t = await c.terminal(org, ws, id, { argv: ["sh", "-c", "echo term-$((2+3))"] });
  seen.terminal = "";
  for await (const chunk of t) seen.terminal += new TextDecoder().decode(chunk);
  seen.terminalExit = t.exit && t.exit.code;
  await c.deleteProject(org, ws, "ts-browser");
  return JSON.stringify(seen);
})()`

// browserSeen is what browserScript answers.
type browserSeen struct {
	Exec, Stream, File, Error, Terminal string
	TerminalExit                        int
}

// testBrowserBundle loads dist/browser/paddock.js into Chromium, in a page
// of the server's origin, and runs browserScript with an org admin's key.
func testBrowserBundle(t *testing.T, s *testenv.Served, dir string) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" || os.Getenv("PADDOCK_REQUIRE_CONSOLE") != "" {
			t.Fatalf("no Chromium at %s: run scripts/setup-host.sh", chromium)
		}
		t.Skipf("no Chromium at %s (scripts/setup-host.sh installs Debian's)", chromium)
	}
	bundle, err := os.ReadFile(filepath.Join(dir, "dist", "browser", "paddock.js"))
	if err != nil {
		t.Fatal(err)
	}
	key := memberKey(t, s)
	js := strings.NewReplacer("__BUNDLE__", jsString(string(bundle)), "__ORG__", jsString(tsOrg), "__WS__", jsString(tsWorkspace), "__KEY__", jsString(key)).Replace(browserScript)
	ctx := newPage(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/health")); err != nil {
		t.Fatal(err)
	}
	ectx, cancel := context.WithTimeout(ctx, testenv.Patience)
	defer cancel()
	out, err := chromedp.Run(ectx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the bundle in Chromium: %v\nserver log:\n%s", err, s.Logs)
	}
	var seen browserSeen
	if err := json.Unmarshal([]byte(out), &seen); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := browserSeen{Exec: "from a browser\n", Stream: "stdout:out stderr:err exit:4", File: "written by a page",
		Error: "true:404:runtime_not_found", TerminalExit: 0}
	got := seen
	got.Stream, got.Terminal = normalizeStream(seen.Stream), ""
	if got != want {
		t.Errorf("in Chromium the bundle saw %+v, want %+v", got, want)
	}
	if !strings.Contains(seen.Terminal, "term-5") {
		t.Errorf("the terminal over the console's cookie printed %q, want term-5", seen.Terminal)
	}
}

// normalizeStream orders a stream's stdout and stderr events, which may
// arrive either way round.
func normalizeStream(s string) string {
	if strings.HasPrefix(s, "stderr:err stdout:out ") {
		return "stdout:out stderr:err " + strings.TrimPrefix(s, "stderr:err stdout:out ")
	}
	return s
}

// newPage starts Chromium headless (stopped when the test ends) and
// answers a tab of it that ignores pages' Content-Security-Policy, so
// that the bundle can be imported from a blob URL.
func newPage(t *testing.T) context.Context {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-default-apps", true))
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if _, err := chromedp.Call(ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return ctx
}

// memberKey adds an admin of the org (who makes and deletes projects) to
// it and its workspace, and answers a key of theirs: the console's
// sign-in takes a user's key, not the installation admin's.
func memberKey(t *testing.T, s *testenv.Served) string {
	t.Helper()
	c, err := pc.New(s.URL, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	const member = "admin@ts-sdk.example"
	if _, err := c.AddOrgMember(t.Context(), tsOrg, pc.AddOrgMemberRequest{Member: member, Role: "admin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddMember(t.Context(), tsOrg, tsWorkspace, pc.AddMemberRequest{Member: member}); err != nil {
		t.Fatal(err)
	}
	k, err := c.CreateKey(t.Context(), tsOrg, pc.CreateKeyRequest{Member: member, Name: "browser"})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
