package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(standInEnv); addr != "" {
		os.Exit(serveStandIn(addr)) // a listener a test started in a network namespace
	}
	// What killed test processes left on the engine, which never swept
	// it: their networks would use up its address pools. Nothing older
	// than an hour is a live test's (each binary's -timeout is 20m).
	if err := testenv.SweepStale(provider.LabelInstance, []string{"pdktest-", "pdkkube-"}, time.Now().Add(-time.Hour)); err != nil {
		fmt.Fprintln(os.Stderr, "sweep what earlier runs left:", err)
	}
	code := testenv.WithPostgres(m).Run()
	testenv.RemoveBinaries()
	// Anything a failed test left behind under this process's instance
	// labels goes too.
	if err := testenv.Sweep(provider.LabelInstance, "pdktest-"+testenv.RunID); err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		code = 1
	}
	os.Exit(code)
}
