package agentconn

// KeptExecConns returns how many framed exec connections c keeps.
func KeptExecConns(c *Client) int {
	c.execs.mu.Lock()
	defer c.execs.mu.Unlock()
	return len(c.execs.idle)
}
