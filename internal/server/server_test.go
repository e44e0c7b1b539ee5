package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
)

func testConfig(t *testing.T, dataDir, listen string) config.Config {
	cfg := config.Default()
	cfg.Provider = "fake"
	cfg.DataDir = dataDir
	cfg.Listen = listen
	cfg.LogLevel = "error"
	cfg.SSHListen = "127.0.0.1:0" // tests run servers side by side
	return cfg
}

// serve runs the server until the test ends or stop is called, and
// returns its URL and what it printed.
func serve(t *testing.T, cfg config.Config) (url string, out *testenv.Buffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &testenv.Buffer{}
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, slog.New(slog.DiscardHandler), out) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	re := regexp.MustCompile(`paddock listening on (http://\S+)`)
	testenv.Eventually(t, func() error {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
			return nil
		}
		select {
		case err := <-done:
			stopped = true // nothing left to wait for
			t.Fatalf("the server stopped before listening: %v\n%s", err, out)
		default:
		}
		return fmt.Errorf("the server did not listen:\n%s", out)
	})
	return url, out, stop
}

var keyRE = regexp.MustCompile(`pdk_[A-Za-z0-9_]+`)

func keyWorks(t *testing.T, url, key string) bool {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/api/v1/orgs", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// TestBusyPortLosesNoKey: a first start that cannot listen fails before it
// creates the admin key, so the next start still prints one; a lost key is
// replaced offline with CreateAdminKey (paddock admin create-key).
func TestBusyPortLosesNoKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	var out bytes.Buffer
	err = server.Run(t.Context(), testConfig(t, dir, busy.Addr().String()), slog.New(slog.DiscardHandler), &out)
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("a start on a busy port = %v", err)
	}
	if keyRE.MatchString(out.String()) {
		t.Fatalf("a start that failed printed a key:\n%s", out.String())
	}

	url, printed, stop := serve(t, testConfig(t, dir, "127.0.0.1:0"))
	first := keyRE.FindString(printed.String())
	if first == "" || !keyWorks(t, url, first) {
		t.Fatalf("the first successful start printed no working key:\n%s", printed)
	}
	stop()

	// The key is lost: make another while the server is stopped.
	var created bytes.Buffer
	if err := server.CreateAdminKey(t.Context(), dir, "", "recovery", &created); err != nil {
		t.Fatal(err)
	}
	second := keyRE.FindString(created.String())
	if second == "" || second == first {
		t.Fatalf("CreateAdminKey printed %q", created.String())
	}
	url, printed, _ = serve(t, testConfig(t, dir, "127.0.0.1:0"))
	if keyRE.MatchString(printed.String()) {
		t.Fatalf("a later start printed a key:\n%s", printed)
	}
	if !keyWorks(t, url, second) || !keyWorks(t, url, first) {
		t.Fatal("a key does not work after the restart")
	}

	if err := server.CreateAdminKey(t.Context(), filepath.Join(t.TempDir(), "none"), "", "x", &created); err == nil || !strings.Contains(err.Error(), "no paddock database") {
		t.Fatalf("CreateAdminKey on an empty data dir = %v", err)
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), "none", "paddock.db")); err == nil {
		t.Fatal("CreateAdminKey created a database")
	}
}
