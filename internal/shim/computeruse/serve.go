package computeruse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Defaults of serve, as the computer-use image expects them.
const (
	DefaultDisplay = ":99"
	DefaultWidth   = 1280
	DefaultHeight  = 800
	DefaultListen  = "127.0.0.1:8931"
	DefaultProfile = "/tmp/paddock-chromium"
)

// ServeOptions configure Serve.
type ServeOptions struct {
	Logger  *slog.Logger
	Version string // the shim's, given in initialize
	// Display is the X display (":99"). When it already answers, Serve
	// starts neither Xvfb nor a browser and only serves.
	Display       string
	Width, Height int
	// Listen is the HTTP transport's address; with Stdio the server
	// serves Stdin and Stdout instead.
	Listen        string
	Stdio         bool
	Stdin         io.Reader
	Stdout        io.Writer
	URL           string // the browser's first page; about:blank if empty
	Xvfb, Browser string // commands; Xvfb and chromium if empty
	Profile       string // the browser's profile directory
}

// BrowserArgs are Chromium's arguments on the profile dir, for a window
// filling a w×h screen: no sandbox of its own (the sandbox is the
// container, whose capabilities it cannot use), shared memory in /tmp, no
// GPU, and none of its own traffic.
func BrowserArgs(profile string, w, h int) []string {
	return []string{
		"--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
		"--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--password-store=basic",
		"--user-data-dir=" + profile,
		"--window-position=0,0", fmt.Sprintf("--window-size=%d,%d", w, h), "--start-maximized",
		// DevTools on a loopback port of its choosing, named in the
		// profile's DevToolsActivePort: readiness and open_url use it.
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
	}
}

const (
	// displayReadyTimeout bounds the wait for a started Xvfb's display:
	// 0.2-0.9 s on an idle machine here, and past 15 s once on a
	// loaded one. An Xvfb that fails ends the wait at once by exiting, so
	// only a hung one waits it out.
	displayReadyTimeout = 3 * time.Minute
	// browserReadyTimeout bounds the wait for a started browser: seconds on
	// an idle machine, and generous for a loaded one.
	browserReadyTimeout = 3 * time.Minute
)

// Serve runs the computer-use sidecar until ctx ends, the display's Xvfb
// exits (an error), or, with Stdio, its input ends.
func Serve(ctx context.Context, o ServeOptions) error {
	o = o.withDefaults()
	log := o.Logger
	n, err := DisplayNumber(o.Display)
	if err != nil {
		return err
	}
	if o.Width <= 0 || o.Height <= 0 {
		return fmt.Errorf("screen size %dx%d", o.Width, o.Height)
	}

	// Listen before starting anything, so a second serve fails at once.
	var ln net.Listener
	if !o.Stdio {
		if ln, err = net.Listen("tcp", o.Listen); err != nil {
			return err
		}
		defer ln.Close()
	}

	var sess *session
	var xvfbDone <-chan struct{} // nil, never ready, when serve started no Xvfb
	if DisplayAnswers(ctx, n) {
		log.Info("computer-use: the display answers already; starting neither Xvfb nor a browser", "display", o.Display)
	} else {
		bargs := append([]string{o.Browser}, BrowserArgs(o.Profile, o.Width, o.Height)...)
		sess, err = startSession(ctx, log, sessionOptions{
			Display: n, Width: o.Width, Height: o.Height, Xvfb: o.Xvfb,
			Browser: append(bargs, o.URL), Profile: o.Profile, ReadyTimeout: displayReadyTimeout,
		})
		if err != nil {
			return err
		}
		defer sess.stop()
		xvfbDone = sess.Done()
	}

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// MCP is served at once; the tools that need the browser wait for it
	// (open_url right after start finds it up), the display's do not. A
	// browser that will not start leaves them answering so.
	browserUp := make(chan struct{})
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		defer close(browserUp)
		if sess == nil {
			return
		}
		if err := waitBrowser(sctx, o.Profile, browserReadyTimeout); err != nil && sctx.Err() == nil {
			log.Warn("computer-use: serving without the browser", "error", err)
		}
	}()
	defer func() { cancel(); <-waited }()
	driver := &XDriver{
		Display:    o.Display,
		Runner:     ExecRunner{Env: []string{"DISPLAY=" + o.Display}},
		ProfileDir: o.Profile,
		BrowserUp:  browserUp,
	}
	srv := NewServer(driver, log, o.Version)
	return serveUntilDone(ctx, sctx, cancel, o, srv, ln, sess, xvfbDone)
}

// withDefaults is o with its empty logger, commands, profile and first
// page filled in.
func (o ServeOptions) withDefaults() ServeOptions {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Xvfb == "" {
		o.Xvfb = "Xvfb"
	}
	if o.Browser == "" {
		o.Browser = "chromium"
	}
	if o.Profile == "" {
		o.Profile = DefaultProfile
	}
	if o.URL == "" {
		o.URL = "about:blank"
	}
	return o
}

// serveUntilDone serves srv on stdin and stdout (o.Stdio) or on ln under
// sctx, until ctx ends, Xvfb (of sess, when xvfbDone is not nil) exits or
// serving fails; then it cancels sctx and shuts the HTTP server down. It
// returns why it stopped: nil when ctx ended.
func serveUntilDone(ctx, sctx context.Context, cancel context.CancelFunc, o ServeOptions, srv *Server, ln net.Listener, sess *session, xvfbDone <-chan struct{}) error {
	log := o.Logger
	served := make(chan error, 1)
	var hs *http.Server
	if o.Stdio {
		log.Info("computer-use: serving MCP on stdin and stdout", "display", o.Display)
		go func() { served <- srv.ServeStdio(sctx, o.Stdin, o.Stdout) }()
	} else {
		hs = &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
		log.Info("computer-use: serving MCP", "url", "http://"+ln.Addr().String()+Path, "display", o.Display)
		go func() { served <- hs.Serve(ln) }()
	}

	var err, serveErr error
	servedDone := false
	select {
	case <-ctx.Done():
	case <-xvfbDone:
		err = fmt.Errorf("Xvfb exited: %w", sess.XvfbExit())
	case serveErr = <-served:
		servedDone = true
	}
	log.Info("computer-use: stopping")
	cancel()
	if hs != nil {
		shctx, shcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = hs.Shutdown(shctx)
		shcancel()
	}
	if !servedDone {
		serveErr = <-served
	}
	if err == nil && serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) && !errors.Is(serveErr, context.Canceled) {
		err = serveErr
	}
	return err
}
