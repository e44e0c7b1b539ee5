package shim

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	"golang.org/x/sys/unix"
)

// TestRunDropsOtherSignals: SIGQUIT, SIGABRT, SIGSEGV and SIGBUS sent by a
// process (as root in a sandbox may send them to the agent) leave the
// agent serving; by Go's default each would end it. And the agent is not
// dumpable, with no key file too.
func TestRunDropsOtherSignals(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		ran <- Run(ctx, RunOptions{Logger: slog.New(slog.DiscardHandler), Socket: sock, Grace: time.Second})
	}()
	dial := func() error {
		c, err := net.Dial("unix", sock)
		if err == nil {
			_ = c.Close()
		}
		return err
	}
	testenv.Eventually(t, dial)
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		t.Fatalf("the agent is dumpable (%d, %v)", d, err)
	}
	// A signal the test waits for, sent after the others: once it is in,
	// the others were handled (the kernel delivers lower numbers first).
	marker := make(chan os.Signal, 1)
	signal.Notify(marker, syscall.SIGWINCH)
	defer signal.Stop(marker)
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGBUS} {
		if err := unix.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	<-marker
	select {
	case err := <-ran:
		t.Fatalf("the agent stopped: %v", err)
	default:
	}
	if err := dial(); err != nil {
		t.Fatalf("the agent no longer serves: %v", err)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}
