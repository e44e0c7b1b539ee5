package sdks

import (
	"fmt"
	"os"
	"testing"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinaries()
	// Anything a failed test left behind under this process's instance
	// labels goes too.
	if err := testenv.Sweep(provider.LabelInstance, "pdktest-"+testenv.RunID); err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		code = 1
	}
	os.Exit(code)
}
