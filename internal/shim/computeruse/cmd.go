package computeruse

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is the computer-use subcommand's usage.
const Usage = `usage:
  paddock-shim computer-use serve [--display :99] [--size 1280x800] [--listen 127.0.0.1:8931] [--url URL] [--stdio]
  paddock-shim computer-use call [--endpoint http://127.0.0.1:8931/mcp] TOOL [JSON-ARGS]`

// Main runs `paddock-shim computer-use ARGS...`.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, version string) error {
	if len(args) == 0 {
		return errors.New(Usage)
	}
	switch args[0] {
	case "serve":
		return serveCmd(ctx, args[1:], stdin, stdout, stderr, version)
	case "call":
		return callCmd(ctx, args[1:], stdout, stderr, version)
	}
	return fmt.Errorf("computer-use: unknown command %q\n%s", args[0], Usage)
}

func serveCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, version string) error {
	fs := flag.NewFlagSet("computer-use serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	display := fs.String("display", DefaultDisplay, "X display to serve (started with Xvfb unless it answers already)")
	size := fs.String("size", fmt.Sprintf("%dx%d", DefaultWidth, DefaultHeight), "screen size, WIDTHxHEIGHT")
	listen := fs.String("listen", DefaultListen, "address of the MCP server's HTTP transport (POST "+Path+")")
	stdio := fs.Bool("stdio", false, "serve MCP on stdin and stdout instead of HTTP")
	url := fs.String("url", "", "the browser's first page (default about:blank)")
	profile := fs.String("profile", DefaultProfile, "the browser's profile directory")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("computer-use serve: unexpected arguments %q", fs.Args())
	}
	w, h, err := parseSize(*size)
	if err != nil {
		return fmt.Errorf("computer-use serve: --size: %w", err)
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("computer-use serve: --log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	return Serve(ctx, ServeOptions{
		Logger: log, Version: version,
		Display: *display, Width: w, Height: h,
		Listen: *listen, Stdio: *stdio, Stdin: stdin, Stdout: stdout,
		URL: *url, Profile: *profile,
	})
}

// parseSize reads WIDTHxHEIGHT.
func parseSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	w, werr := strconv.Atoi(ws)
	h, herr := strconv.Atoi(hs)
	if !ok || werr != nil || herr != nil || w < 64 || h < 64 || w > 8192 || h > 8192 {
		return 0, 0, fmt.Errorf("%q: want WIDTHxHEIGHT, such as 1280x800", s)
	}
	return w, h, nil
}

// ErrToolFailed is returned by call when the tool's result is an error
// (the result is printed all the same).
var ErrToolFailed = errors.New("the tool reported an error")

func callCmd(ctx context.Context, args []string, stdout, stderr io.Writer, version string) error {
	fs := flag.NewFlagSet("computer-use call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", DefaultEndpoint, "the MCP server's URL")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long the whole call may take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return fmt.Errorf("computer-use call: want TOOL [JSON-ARGS]\n%s", Usage)
	}
	tool := fs.Arg(0)
	var toolArgs json.RawMessage
	if fs.NArg() == 2 {
		toolArgs = json.RawMessage(fs.Arg(1))
		var obj map[string]any
		if err := json.Unmarshal(toolArgs, &obj); err != nil {
			return fmt.Errorf("computer-use call: the arguments must be a JSON object: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c := &Client{Endpoint: *endpoint, Name: "paddock-shim computer-use call", Version: version}
	if err := c.Initialize(ctx); err != nil {
		return fmt.Errorf("computer-use call: %w", err)
	}
	res, err := c.CallTool(ctx, tool, toolArgs)
	if err != nil {
		return fmt.Errorf("computer-use call %s: %w", tool, err)
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", res); err != nil {
		return err
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &r) == nil && r.IsError {
		return ErrToolFailed
	}
	return nil
}
