package agentconn

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
)

type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestReadAheadStops: readAhead's stop waits for a read of the source
// under way, and nothing reads the source after it returns (in the
// server the source is a request's body, which must not be read once its
// handler has returned).
func TestReadAheadStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var reads atomic.Int32
		_, stop := readAhead(readerFunc(func(p []byte) (int, error) {
			reads.Add(1)
			<-release
			return len(p), nil
		}))
		synctest.Wait() // blocked in its first read
		stopped := make(chan struct{})
		go func() {
			stop()
			close(stopped)
		}()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("stop returned while a read of the source was under way")
		default:
		}
		close(release)
		<-stopped
		n := reads.Load()
		synctest.Wait()
		if got := reads.Load(); got != n {
			t.Fatalf("the source was read %d more times after stop returned", got-n)
		}
	})
}
