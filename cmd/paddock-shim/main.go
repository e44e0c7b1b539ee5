// Command paddock-shim is paddock's in-sandbox agent. It runs as PID 1 in
// every sandbox (reaping orphans and forwarding signals) and serves the agent
// protocol (api/agent/v1) over HTTP/2 cleartext on a unix socket, or over
// TCP inside TLS pinned to the sandbox's agent key, or both:
//
//	paddock-shim serve --socket /.paddock/run/agent.sock
//	paddock-shim serve --listen :7443 --key-file KEY --run-dir DIR
//
// In an image that holds nothing else (a Kubernetes Pod's init container)
// it copies itself, and the agent key, to where the sandbox runs it:
//
//	paddock-shim install DIR [--key-from FILE]
//
// Inside a sandbox, it prints the public URL at which the preview gateway
// serves one of the sandbox's ports, so an agent can tell its user where
// its app runs:
//
//	paddock-shim url PORT
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
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/shim/computeruse"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// The main goroutine keeps the main thread to itself. The agent acts as
// other accounts on threads of their own and throws away one it cannot
// restore; the runtime cannot end the main thread, and would keep it,
// wedged, with the identity it was left with, which the account's
// processes could then signal.
func init() { runtime.LockOSThread() }

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
	if len(args) > 0 && args[0] == "install" {
		return install(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "url" {
		return previewURL(args[1:], os.Stdout)
	}
	if len(args) == 0 || args[0] != "serve" {
		return fmt.Errorf("usage: paddock-shim serve [--socket PATH] [--listen ADDR] [--key-file PATH] [--run-dir DIR] [--trust PATH] [--grace DURATION] [--user NAME] [--log-level LEVEL]\n%s\n%s\n%s", installUsage, urlUsage, computeruse.Usage)
	}
	o, err := serveOptions(args[1:], stderr)
	if err != nil {
		return err
	}
	return shim.Run(context.Background(), o)
}

// serveOptions parses serve's flags.
func serveOptions(args []string, stderr io.Writer) (shim.RunOptions, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", defaultSocket, "unix socket to serve on (the default unless --listen is given alone)")
	listen := fs.String("listen", "", "TCP address to serve on, as host:port: TLS pinned to the agent key, so it needs --key-file")
	keyFile := fs.String("key-file", "", "file holding the sandbox's agent key; read and deleted at start, then every connection must prove the key")
	runDir := fs.String("run-dir", "", "writable directory for the agent's own files (the CA bundle of --trust); default the socket's directory")
	trust := fs.String("trust", "", "CA certificate (PEM) every process trusts beside the image's roots; a bundle of both is written to the run directory")
	grace := fs.Duration("grace", 10*time.Second, "how long processes get to exit on SIGTERM before they are killed")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	user := fs.String("user", "", `the account processes run as and files are written as unless a call names another: "user" (uid 1000) or "root"; empty means the agent's own`)
	if err := fs.Parse(args); err != nil {
		return shim.RunOptions{}, err
	}
	if fs.NArg() > 0 {
		return shim.RunOptions{}, fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	if *listen != "" && !flagSet(fs, "socket") {
		*socket = "" // --listen alone: no unix socket
	}
	if *listen != "" && *keyFile == "" {
		return shim.RunOptions{}, errors.New("serve: --listen needs --key-file: the agent does not serve TCP without its key")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return shim.RunOptions{}, fmt.Errorf("serve: --log-level: %w", err)
	}
	return shim.RunOptions{
		Logger:    slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})),
		Socket:    *socket,
		Listen:    *listen,
		KeyFile:   *keyFile,
		RunDir:    *runDir,
		TrustFile: *trust,
		Version:   version,
		Grace:     *grace,
		User:      *user,
	}, nil
}

// defaultSocket is where the agent serves when given no address.
const defaultSocket = "/.paddock/run/agent.sock"

// flagSet reports whether name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// urlUsage is the url command's line of the usage.
const urlUsage = "       paddock-shim url PORT   (this sandbox's public preview URL of PORT)"

// previewURL prints this sandbox's preview URL of the one port args name.
func previewURL(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: paddock-shim url PORT")
	}
	u, err := shim.PreviewURL(os.Getenv, args[0])
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, u)
	return err
}
