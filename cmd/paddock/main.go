// Command paddock is paddock's server (paddock serve) and its command-line
// client (every other command).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/paddockhq/paddock/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
