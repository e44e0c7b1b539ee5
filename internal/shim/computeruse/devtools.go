package computeruse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The browser is driven through its DevTools HTTP endpoint, which Chromium
// opens on a loopback port of its choosing (--remote-debugging-port=0) and
// names in DevToolsActivePort in its profile directory: the port on the
// first line. The sidecar is ready once that endpoint answers, and open_url
// asks it for a new tab instead of starting a browser process per call.

// devToolsFile is the file Chromium writes in its profile directory once
// its DevTools endpoint listens.
const devToolsFile = "DevToolsActivePort"

// devTools talks to the DevTools endpoint on loopback, never through a
// proxy the sandbox's environment names.
var devTools = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// devToolsAddr returns the loopback address of the DevTools endpoint of the
// browser on profile, as its DevToolsActivePort file names it.
func devToolsAddr(profile string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(profile, devToolsFile))
	if err != nil {
		return "", false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	port, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || port <= 0 || port > 65535 {
		return "", false
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), true
}

// devToolsCall makes one request to the browser on profile's DevTools
// endpoint and decodes its JSON answer into out (nil: ignored). A browser
// that does not run, or does not answer yet, is ErrNoBrowser.
func devToolsCall(ctx context.Context, profile, method, path string, out any) error {
	addr, ok := devToolsAddr(profile)
	if !ok {
		return ErrNoBrowser
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	res, err := devTools.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return ErrNoBrowser
		}
		return fmt.Errorf("the browser's DevTools endpoint: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("the browser's DevTools endpoint: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("the browser's DevTools endpoint answered %s: %s", res.Status, strings.TrimSpace(string(body)))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

// browserAnswers reports whether the browser on profile answers on its
// DevTools endpoint.
func browserAnswers(ctx context.Context, profile string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var v struct{ Browser string }
	return devToolsCall(ctx, profile, http.MethodGet, "/json/version", &v) == nil && v.Browser != ""
}

// waitBrowser waits until the browser on profile answers, ctx ends or
// timeout passes.
func waitBrowser(ctx context.Context, profile string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !browserAnswers(ctx, profile) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the browser did not answer on its DevTools endpoint within %s", timeout)
		case <-tick.C:
		}
	}
	return nil
}

// openTab opens rawURL in a new tab of the browser on profile and brings
// the tab to the front.
func openTab(ctx context.Context, profile, rawURL string) error {
	// Chromium takes the whole query as the URL, unescaping it: escaped,
	// the URL's own ? and & stay part of it.
	var target struct{ ID string }
	if err := devToolsCall(ctx, profile, http.MethodPut, "/json/new?"+url.PathEscape(rawURL), &target); err != nil {
		return err
	}
	if target.ID == "" {
		return errors.New("the browser's DevTools endpoint made no tab")
	}
	return devToolsCall(ctx, profile, http.MethodGet, "/json/activate/"+url.PathEscape(target.ID), nil)
}
