package api_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestMain fails the package if a test leaves a goroutine behind: every
// request, stream and WebSocket a handler serves must end with it. It
// stops the throwaway PostgreSQL the shared limits' tests start.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.WithPostgres(m))
}
