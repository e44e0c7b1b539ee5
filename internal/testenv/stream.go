package testenv

import (
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// PatternReader yields n pseudo-random bytes cheaply, the same for every
// call: a random block with its position mixed in, so no two blocks are
// alike and a checksum catches a block out of place.
func PatternReader(n int64) io.Reader {
	r := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(r.Uint32())
	}
	return &patternReader{block: block, n: n, cur: make([]byte, len(block))}
}

type patternReader struct {
	block []byte
	n     int64
	off   int64
	cur   []byte
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	bs := int64(len(p.block))
	pos := p.off % bs
	if pos == 0 {
		copy(p.cur, p.block)
		idx := p.off / bs
		for i := range 8 {
			p.cur[i] ^= byte(idx >> (8 * i))
		}
	}
	n := copy(b, p.cur[pos:min(bs, pos+p.n-p.off)])
	p.off += int64(n)
	return n, nil
}

// HeapPeak measures, until stop is called, how much more of this
// process's heap was reachable than when HeapPeak was called, and returns
// the most it saw, in bytes: a test of a stream checks with it that the
// stream was not held in memory whole.
//
// It collects every few milliseconds and reads what the collection found
// live. The heap's running size would not do: it counts garbage until the
// collector sweeps it, the collector lets garbage grow to as much again as
// the live heap (in a test process, a whole server and whatever the tests
// beside it keep), and a busy machine's collector falls further behind.
// What is reachable is what the stream holds.
func HeapPeak() (stop func() uint64) {
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		runtime.GC()
		metrics.Read(samples)
		return samples[0].Value.Uint64()
	}
	base := live()
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		peak uint64
	)
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				peak = max(peak, live())
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		peak = max(peak, live())
		if peak < base {
			return 0
		}
		return peak - base
	}
}
