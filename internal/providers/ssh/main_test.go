package ssh_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestMain removes the binaries the tests built and checks that no
// goroutine outlives them (each connection's watch and keepalive end with
// it). Every machine a test made (its engine and sshd) went with the test.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinaries()
	if code == 0 {
		// A channel opened on a connection just as it ends is never
		// answered (x/crypto/ssh; see await in conn.go): the opener's
		// goroutine waits for good, abandoned by the provider.
		if err := goleak.Find(goleak.IgnoreTopFunction("golang.org/x/crypto/ssh.(*mux).openChannel")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
