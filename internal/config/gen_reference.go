//go:build ignore

// gen_reference writes the settings reference (config.Reference) to the
// file it is given: go generate ./internal/config writes docs/CONFIG.md.
package main

import (
	"fmt"
	"os"

	"github.com/paddockhq/paddock/internal/config"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run gen_reference.go FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], config.Reference(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
