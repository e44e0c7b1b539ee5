package main

import (
	"errors"
	"flag"
	"io"

	"github.com/paddockhq/paddock/internal/shim"
)

// installUsage is install's line of the usage.
const installUsage = "       paddock-shim install DIR [--key-from FILE]"

// install runs "paddock-shim install DIR [--key-from FILE]" (see
// shim.Install); the flag may come before or after DIR.
func install(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyFrom := fs.String("key-from", "", "file holding the sandbox's agent key, copied to DIR/agent.key (0400)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return errors.New("usage: paddock-shim install DIR [--key-from FILE]")
	}
	dir := rest[0]
	if err := fs.Parse(rest[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("install: unexpected arguments after DIR: usage: paddock-shim install DIR [--key-from FILE]")
	}
	return shim.Install(dir, *keyFrom)
}
