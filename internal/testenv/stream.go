package testenv

import (
	"io"
	"math/rand/v2"
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

// HeapPeak samples this process's live heap until stop is called, and
// returns the highest figure seen, in bytes: a test of a stream checks
// with it that the stream was not held in memory whole.
func HeapPeak() (stop func() uint64) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		peak uint64
	)
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			peak = max(peak, samples[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}
