package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

// imageSandbox starts a sandbox of image through the Docker provider,
// hardened as every sandbox is (no capabilities, read-only root, no
// network), and returns a client of its agent. Everything is removed when
// t ends.
func imageSandbox(t *testing.T, image string, res provider.Resources) *agentconn.Client {
	t.Helper()
	testenv.RequireDocker(t, image)
	instance := testenv.Instance(t)
	p := testenv.DockerProvider(t, instance)
	spec := provider.Spec{
		SandboxID: uuid.NewString(),
		RuntimeID: uuid.NewString(),
		OrgID:     uuid.NewString(),
		Instance:  instance,
		Image:     image,
		Resources: res,
		Workspace: "pdkws-" + uuid.NewString(),
		Network:   provider.NetworkNone,
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	h, err := p.Create(ctx, spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := p.Start(ctx, h); err != nil {
		t.Fatalf("Start: %v", err)
	}
	c := agentconn.New(func(ctx context.Context) (net.Conn, error) { return p.DialAgent(ctx, h) })
	t.Cleanup(func() { c.Close() })
	return c
}

// sandboxRun runs argv in the sandbox and returns its exit code and output.
func sandboxRun(t *testing.T, c *agentconn.Client, timeout time.Duration, argv ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout+30*time.Second)
	defer cancel()
	res, err := c.Run(ctx, agentconn.ExecRequest{Argv: argv, Timeout: timeout})
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	return res.Exit.Code, string(res.Stdout), string(res.Stderr)
}

const cuShimPath = "/.paddock/bin/paddock-shim"

// cuCallTool calls a computer-use tool with `paddock-shim computer-use call`
// in the sandbox and returns its result.
func cuCallTool(t *testing.T, c *agentconn.Client, tool, args string) (result struct {
	Content []struct {
		Type, Text, Data, MimeType string
	}
	IsError bool
}, err error) {
	t.Helper()
	argv := []string{cuShimPath, "computer-use", "call", tool}
	if args != "" {
		argv = append(argv, args)
	}
	code, stdout, stderr := sandboxRun(t, c, 3*time.Minute, argv...)
	if code != 0 {
		return result, fmt.Errorf("call %s exited %d: %s%s", tool, code, stdout, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &result); err != nil {
		return result, fmt.Errorf("call %s printed %q: %v", tool, stdout, err)
	}
	return result, nil
}

// cuScreenshot takes a screenshot through the MCP server and decodes it.
func cuScreenshot(t *testing.T, c *agentconn.Client) image.Image {
	t.Helper()
	r, err := cuCallTool(t, c, "screenshot", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError || len(r.Content) == 0 || r.Content[0].Type != "image" || r.Content[0].MimeType != "image/png" {
		t.Fatalf("screenshot answered %+v", r)
	}
	b, err := base64.StdEncoding.DecodeString(r.Content[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	return img
}

// cuColourShare returns how many distinct colours img has (up to 1000) and
// the share of its pixels within 8 of r, g, b in each channel.
func cuColourShare(img image.Image, r, g, b uint8) (distinct int, share float64) {
	seen := map[uint32]bool{}
	near := func(a uint32, want uint8) bool { d := int(a>>8) - int(want); return d >= -8 && d <= 8 }
	bounds := img.Bounds()
	n := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if len(seen) < 1000 {
				seen[(pr>>8)<<16|(pg>>8)<<8|pb>>8] = true
			}
			if near(pr, r) && near(pg, g) && near(pb, b) {
				n++
			}
		}
	}
	return len(seen), float64(n) / float64(bounds.Dx()*bounds.Dy())
}

// TestComputerUseImage runs the computer-use sidecar in a hardened
// sandbox of the computer-use image: Xvfb and Chromium start, the MCP
// server's tools see and drive them, a second server on stdio shares the
// display, and SIGTERM stops everything it started.
func TestComputerUseImage(t *testing.T) {
	c := imageSandbox(t, testenv.ComputerUseImage, provider.Resources{
		// Chromium's processes and threads all count against the pids
		// limit; its shared memory lives in /tmp (--disable-dev-shm-usage).
		CPUMillis: 2000, MemoryMB: 1536, PidsLimit: 1024, DiskMB: 64, TmpMB: 512,
	})
	ctx := t.Context()

	serve, err := c.Exec(ctx, agentconn.ExecRequest{
		Argv:       []string{cuShimPath, "computer-use", "serve", "--display", ":99", "--size", "1280x800"},
		Background: true,
	})
	if err != nil {
		t.Fatalf("starting serve: %v", err)
	}
	serveID := serve.ID()
	serve.Close() // a background process outlives its call
	serveLog := func() string {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		s, err := c.Replay(ctx, serveID, agentconn.Offsets{})
		if err != nil {
			return err.Error()
		}
		var out bytes.Buffer
		_, _ = s.Wait(&out, &out)
		return out.String()
	}

	// The server listens at once, and answers once the browser does: the
	// first call right after start finds the browser up (it used to answer
	// "the browser is not running" for seconds).
	listening := func() bool {
		_, tcp, _ := sandboxRun(t, c, time.Minute, "cat", "/proc/net/tcp")
		for _, line := range strings.Split(tcp, "\n") {
			if f := strings.Fields(line); len(f) > 3 && strings.HasSuffix(f[1], ":22E3") && f[3] == "0A" {
				return true
			}
		}
		return false
	}
	testenv.Eventually(t, func() error {
		if !listening() {
			return fmt.Errorf("serve does not listen on 8931\nserve's output:\n%s", serveLog())
		}
		return nil
	})
	// A page filling the window with magenta takes most of the screen.
	page := `data:text/html,<html style="background:%23ff00ff;height:100%"><body style="margin:0">paddock</body></html>`
	if r, err := cuCallTool(t, c, "open_url", `{"url":"`+strings.ReplaceAll(page, `"`, `\"`)+`"}`); err != nil || r.IsError {
		t.Fatalf("open_url, the first call after start: %+v %v\nserve's output:\n%s", r, err, serveLog())
	}
	for _, line := range strings.Split(serveLog(), "\n") {
		if strings.Contains(line, "the display answers") {
			t.Log(line) // how long Xvfb took, under this run's load
		}
	}
	var share float64
	testenv.Eventually(t, func() error {
		img := cuScreenshot(t, c)
		if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
			t.Fatalf("the screenshot is %v, want 1280x800", b)
		}
		if _, share = cuColourShare(img, 0xff, 0, 0xff); share <= 0.6 {
			return fmt.Errorf("after open_url, magenta covers %.0f%% of the screen, want most of it\nserve's output:\n%s", share*100, serveLog())
		}
		return nil
	})
	t.Logf("the page's magenta covers %.0f%% of the screen", share*100)

	if r, err := cuCallTool(t, c, "mouse_move", `{"x":123,"y":456}`); err != nil || r.IsError {
		t.Fatalf("mouse_move: %+v %v", r, err)
	}
	if r, err := cuCallTool(t, c, "cursor_position", ""); err != nil || r.IsError || len(r.Content) == 0 || r.Content[0].Text != "123,456" {
		t.Fatalf("cursor_position after moving to 123,456: %+v %v", r, err)
	}
	if r, err := cuCallTool(t, c, "click", `{"x":640,"y":500}`); err != nil || r.IsError {
		t.Fatalf("click: %+v %v", r, err)
	}
	if r, err := cuCallTool(t, c, "key", `{"keys":"ctrl+l"}`); err != nil || r.IsError {
		t.Fatalf("key: %+v %v", r, err)
	}
	if r, err := cuCallTool(t, c, "scroll", `{"x":640,"y":500,"direction":"down","amount":2}`); err != nil || r.IsError {
		t.Fatalf("scroll: %+v %v", r, err)
	}

	// A second server on stdio finds the display up and starts nothing.
	stdin := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cursor_position","arguments":{}}}`,
	}, "\n") + "\n"
	res, err := c.Run(ctx, agentconn.ExecRequest{
		Argv:    []string{cuShimPath, "computer-use", "serve", "--stdio", "--display", ":99"},
		Stdin:   strings.NewReader(stdin),
		Timeout: time.Minute,
	})
	if err != nil || res.Exit.Code != 0 {
		t.Fatalf("serve --stdio: %+v %v\n%s", res.Exit, err, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"protocolVersion":"2025-06-18"`) || !strings.Contains(lines[1], `"text":"640,500"`) {
		t.Fatalf("serve --stdio answered:\n%s\nlogged:\n%s", res.Stdout, res.Stderr)
	}
	if !strings.Contains(string(res.Stderr), "starting neither Xvfb nor a browser") {
		t.Fatalf("serve --stdio on a live display logged:\n%s", res.Stderr)
	}

	// SIGTERM: the server stops the browser and Xvfb and exits.
	if err := c.Signal(ctx, serveID, syscall.SIGTERM, true); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	att, err := c.Attach(wctx, serveID, agentconn.Offsets{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	exit, err := att.Wait(&out, &out)
	if err != nil {
		t.Fatalf("waiting for serve after SIGTERM: %v", err)
	}
	if exit.Code != 0 {
		t.Fatalf("serve exited %+v after SIGTERM:\n%s", exit, out.String())
	}
	code, ps, _ := sandboxRun(t, c, time.Minute, "ps", "-eo", "stat=,comm=")
	if code != 0 {
		t.Fatalf("ps exited %d", code)
	}
	for _, line := range strings.Split(ps, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && !strings.HasPrefix(f[0], "Z") && (f[1] == "Xvfb" || strings.HasPrefix(f[1], "chrom")) {
			t.Fatalf("%s still runs after serve stopped:\n%s", f[1], ps)
		}
	}
}
