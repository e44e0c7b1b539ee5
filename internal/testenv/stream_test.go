package testenv_test

import (
	"io"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
)

// sink keeps what a test holds reachable, so the compiler cannot drop it.
var sink [][]byte

// TestHeapPeak: a stream's garbage does not count as held, and what is held
// does, whatever the live heap was when the window opened.
func TestHeapPeak(t *testing.T) {
	const mib = 1 << 20
	// A live heap of 64 MiB beside the window: the collector would let
	// as much again of garbage pile up before it ran.
	sink = make([][]byte, 0, 64)
	for range 64 {
		sink = append(sink, make([]byte, mib))
	}
	t.Cleanup(func() { sink = nil })

	t.Run("garbage", func(t *testing.T) {
		// A stream that makes a fresh 256 KiB chunk for each piece it
		// passes on, as a relay that does not reuse its buffers does, at
		// up to 256 MB/s, the speed of a file through the API.
		stop := testenv.HeapPeak()
		src := testenv.PatternReader(256 << 20)
		chunks := make(chan []byte)
		go func() {
			defer close(chunks)
			for {
				b := make([]byte, 256<<10)
				if _, err := io.ReadFull(src, b); err != nil {
					return
				}
				chunks <- b
				time.Sleep(time.Millisecond)
			}
		}()
		var sum byte
		for b := range chunks {
			sum ^= b[len(b)-1]
		}
		if grew := stop(); grew > 32*mib {
			t.Fatalf("256 MiB streamed in fresh 256 KiB chunks counted as %d MiB held", grew/mib)
		}
	})
	t.Run("held", func(t *testing.T) {
		stop := testenv.HeapPeak()
		held := make([][]byte, 0, 64)
		for range 64 {
			held = append(held, make([]byte, mib))
		}
		if grew := stop(); grew < 60*mib {
			t.Fatalf("64 MiB held counted as %d MiB", grew/mib)
		}
		sink = append(sink, held...)
	})
}
