package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"testing"

	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestReplicasStartTogether: servers started at the same moment on one
// fresh data directory (replicas on one host) take turns initialising, so
// the installation is made once: one admin key is printed, and it works on
// every replica.
func TestReplicasStartTogether(t *testing.T) {
	dir := t.TempDir()
	const n = 3
	ctx, cancel := context.WithCancel(context.Background())
	outs := make([]*testenv.Buffer, n)
	done := make(chan error, n)
	for i := range outs {
		outs[i] = &testenv.Buffer{}
		go func() {
			done <- server.Run(ctx, testConfig(t, dir, "127.0.0.1:0"), slog.New(slog.DiscardHandler), outs[i])
		}()
	}
	defer func() {
		cancel()
		for range n {
			if err := <-done; err != nil {
				t.Errorf("server: %v", err)
			}
		}
	}()
	re := regexp.MustCompile(`paddock listening on (http://\S+)`)
	urls := make([]string, n)
	testenv.Eventually(t, func() error {
		for i, out := range outs {
			m := re.FindStringSubmatch(out.String())
			if m == nil {
				return fmt.Errorf("replica %d does not listen:\n%s", i, out)
			}
			urls[i] = m[1]
		}
		return nil
	})
	var keys []string
	for _, out := range outs {
		keys = append(keys, keyRE.FindAllString(out.String(), -1)...)
	}
	if len(keys) != 1 {
		t.Fatalf("replicas started together printed admin keys %v, want one", keys)
	}
	for i, url := range urls {
		if !keyWorks(t, url, keys[0]) {
			t.Errorf("the admin key does not work on replica %d", i)
		}
	}
}
