package runtime

import (
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestMain stops the PostgreSQL cluster the replicas' tests start.
func TestMain(m *testing.M) { testenv.MainWithPostgres(m) }
