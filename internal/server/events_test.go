package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/provider"
)

// lockedBuffer is a log both the server and the test touch.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestShutdownEndsEventStreams: an event stream never ends by itself, so
// a shutdown ends it as it begins: the client reads the end, and the
// drain does not wait out its deadline for it.
func TestShutdownEndsEventStreams(t *testing.T) {
	cfg, f, ln := failingConfig(t)
	var logs lockedBuffer
	s, err := Build(t.Context(), cfg, slog.New(slog.NewTextHandler(&logs, nil)), io.Discard,
		Overrides{Listener: ln, Providers: []provider.Provider{f}, Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := auth.Keys{Store: s.Store(), Now: time.Now}.CreateInstallation(t.Context(), "test", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), "GET", "http://"+ln.Addr().String()+"/api/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || resp.StatusCode != 200 || line != ": paddock events\n" {
		t.Fatalf("the stream opened with %d %q %v", resp.StatusCode, line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if rest, err := io.ReadAll(r); err != nil {
		t.Fatalf("the stream ended with %v after %q", err, rest)
	}
	if l := logs.String(); strings.Contains(l, "shutdown did not drain every request") {
		t.Fatalf("the drain waited out its deadline for the stream:\n%s", l)
	}
}
