// Command paddock-shim is paddock's in-sandbox agent. It runs as PID 1 in
// every sandbox (reaping orphans and forwarding signals) and serves the agent
// protocol (api/agent/v1) over HTTP/2 cleartext on a unix socket:
//
//	paddock-shim serve --socket /.paddock/run/agent.sock
//
// In sandboxes of the computer-use image it also runs the computer-use
// sidecar (a virtual display, a browser and an MCP server driving them)
// and a small client of it:
//
//	paddock-shim computer-use serve [--display :99] [--size 1280x800] [--listen 127.0.0.1:8931] [--stdio]
//	paddock-shim computer-use call TOOL [JSON-ARGS]
//
// Called as "sudo" (the default image links /usr/bin/sudo to it), it is
// the client of the agent's sudo: see internal/shim/sudo.go.
//
// It is built static (CGO_ENABLED=0) and imports nothing of the control
// plane. See internal/shim and internal/shim/computeruse.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/shim/computeruse"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// The image's sudo is a link to this binary (shim.SudoLink).
	if filepath.Base(os.Args[0]) == "sudo" {
		os.Exit(shim.SudoMain(os.Args[1:], os.Stderr))
	}
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "paddock-shim:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Fprintln(stderr, version)
		return nil
	}
	if len(args) > 0 && args[0] == "computer-use" {
		return computeruse.Main(context.Background(), args[1:], os.Stdin, os.Stdout, stderr, version)
	}
	if len(args) == 0 || args[0] != "serve" {
		return fmt.Errorf("usage: paddock-shim serve [--socket PATH] [--key-file PATH] [--trust PATH] [--grace DURATION] [--user NAME] [--log-level LEVEL]\n%s", computeruse.Usage)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "/.paddock/run/agent.sock", "unix socket to serve on")
	keyFile := fs.String("key-file", "", "file holding the sandbox's agent key; read and deleted at start, then every connection must prove the key")
	trust := fs.String("trust", "", "CA certificate (PEM) every process trusts beside the image's roots; a bundle of both is written beside the socket")
	grace := fs.Duration("grace", 10*time.Second, "how long processes get to exit on SIGTERM before they are killed")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	user := fs.String("user", "", `the account processes run as and files are written as unless a call names another: "user" (uid 1000) or "root"; empty means the agent's own`)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("serve: --log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	return shim.Run(context.Background(), shim.RunOptions{
		Logger:    log,
		Socket:    *socket,
		KeyFile:   *keyFile,
		TrustFile: *trust,
		Version:   version,
		Grace:     *grace,
		User:      *user,
	})
}
