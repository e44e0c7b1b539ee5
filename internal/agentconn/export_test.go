package agentconn

import "time"

// KeptExecConns returns how many framed exec connections c keeps.
func KeptExecConns(c *Client) int {
	c.execs.mu.Lock()
	defer c.execs.mu.Unlock()
	return len(c.execs.idle)
}

// WithKeptWatch has c look at its kept framed connections every d,
// rather than every keptWatch.
func WithKeptWatch(d time.Duration) Option {
	return func(c *Client) { c.execs.watch = d }
}

// KeptClosed reports whether c keeps framed connections and its next call
// will find each one closed by its agent when it looks at it, without
// taking any.
func KeptClosed(c *Client) bool {
	c.execs.mu.Lock()
	defer c.execs.mu.Unlock()
	for _, ec := range c.execs.idle {
		if ec.raw == nil || ec.quiet() == nil {
			return false
		}
	}
	return len(c.execs.idle) > 0
}
