package computeruse

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestServeAnswersBeforeTheBrowser: the sidecar serves MCP as soon as its
// display answers, while the browser it started does not answer yet (here:
// never); it does not keep clients waiting for the browser.
func TestServeAnswersBeforeTheBrowser(t *testing.T) {
	withSocketDir(t)
	dir := t.TempDir()
	started := filepath.Join(dir, "xvfb-started")
	xvfb := filepath.Join(dir, "xvfb")
	// "Xvfb" says it runs; the test's display answers from then on.
	script := "#!/bin/sh\n: > '" + started + "'\nexec sleep 600\n"
	if err := os.WriteFile(xvfb, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeXWith(t, 42, func() byte {
		if _, err := os.Stat(started); err == nil {
			return 1
		}
		return 0
	})
	// A "browser" that runs and never opens its DevTools endpoint.
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	warned := &testenv.Buffer{}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ServeOptions{
			Logger: slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), warned), &slog.HandlerOptions{Level: slog.LevelWarn})), Display: ":42", Width: 640, Height: 400, Stdio: true, Stdin: inR, Stdout: outW,
			Xvfb: xvfb, Browser: browser, Profile: filepath.Join(dir, "profile"),
		})
		outW.Close()
	}()
	defer func() {
		cancel()
		inW.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	answered := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outR).ReadString('\n')
		answered <- line
		io.Copy(io.Discard, outR)
	}()
	// The pipe takes the request only once Serve reads it.
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t"}}}`+"\n")
	// The browser is waited for up to browserReadyTimeout, and giving up
	// on it is logged: an answer that comes while nothing has been logged
	// is one that did not wait for the browser.
	line := <-answered
	var m Message
	if err := json.Unmarshal([]byte(line), &m); err != nil || !strings.Contains(string(m.Result), "protocolVersion") {
		t.Fatalf("initialize answered %q (%v)", line, err)
	}
	if w := warned.String(); strings.Contains(w, "serving without the browser") {
		t.Fatalf("MCP answered only once it had given up on the browser: %s", w)
	}
}
