package server_test

import (
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestMain stops the throwaway PostgreSQL the tests of replicas on one
// database start.
func TestMain(m *testing.M) { testenv.MainWithPostgres(m) }
