package mcp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a
// request to /mcp, the in-process calls of its tools and a stdio server
// all end with their client.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
