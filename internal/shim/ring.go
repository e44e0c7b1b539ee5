package shim

// ring keeps the last cap bytes of one output stream and the offset of
// every byte in it. It is not safe for concurrent use; the process that owns
// it guards it with its mutex.
//
// Bytes [start, end) are kept; end is the total the stream ever produced.
// The backing array grows on demand up to cap, so a quiet process costs
// little; once full it is used circularly (offset off lives at off % cap).
type ring struct {
	cap        int
	buf        []byte
	start, end int64
	closed     bool // the stream reached EOF
}

func newRing(capacity int) *ring {
	return &ring{cap: capacity}
}

// space returns how many bytes can be written without dropping any byte at
// or after offset pin.
func (r *ring) space(pin int64) int {
	used := r.end - pin
	if used < 0 {
		used = 0
	}
	return r.cap - int(used)
}

// write appends p, dropping the oldest bytes when more than cap are kept.
func (r *ring) write(p []byte) {
	if len(r.buf) < r.cap {
		// Not wrapped yet: start is 0 and offset off is at index off.
		need := int(r.end) + len(p)
		if need <= r.cap {
			if need > len(r.buf) {
				nb := make([]byte, min(max(2*len(r.buf), need, 4096), r.cap))
				copy(nb, r.buf[:r.end])
				r.buf = nb
			}
			r.end += int64(copy(r.buf[r.end:], p))
			return
		}
		nb := make([]byte, r.cap)
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	if len(p) > r.cap {
		r.end += int64(len(p) - r.cap)
		p = p[len(p)-r.cap:]
	}
	for len(p) > 0 {
		n := copy(r.buf[r.end%int64(r.cap):], p)
		r.end += int64(n)
		p = p[n:]
	}
	if r.end-r.start > int64(r.cap) {
		r.start = r.end - int64(r.cap)
	}
}

// readAt copies bytes from offset off into p. It returns how many bytes it
// copied and how many bytes before them were lost (off was older than what
// is kept); the data copied starts at off+lost.
func (r *ring) readAt(off int64, p []byte) (n int, lost int64) {
	if off < r.start {
		lost = r.start - off
		off = r.start
	}
	if off >= r.end {
		return 0, lost
	}
	avail := r.end - off
	if int64(len(p)) > avail {
		p = p[:avail]
	}
	for len(p) > 0 {
		pos := int(off % int64(r.cap))
		limit := len(r.buf)
		c := copy(p, r.buf[pos:limit])
		n += c
		off += int64(c)
		p = p[c:]
	}
	return n, lost
}
