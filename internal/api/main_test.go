package api_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: every
// request, stream and WebSocket a handler serves must end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
