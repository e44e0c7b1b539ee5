package server

import (
	"slices"
	"testing"
)

// TestComponentOrder: the server's components form a graph without a
// cycle or a missing requirement, and initialise in this order: the
// store first, the HTTP API last, so that it stops taking requests
// before anything it serves closes (they close in reverse).
func TestComponentOrder(t *testing.T) {
	got, err := ComponentNames()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"store", "metrics", "providers", "secrets", "egress", "runtime", "ledger",
		"bindings", "sessions", "lifecycle", "ssh", "preview", "http",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
