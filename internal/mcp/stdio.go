package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/pkg/client"
)

// ServeStdio serves the tools, calling the API through c, to one client
// over MCP's stdio transport (newline-delimited JSON-RPC on in and out)
// until in ends or ctx does. When in ends, the requests read before are
// answered first, so that `… | paddock mcp` gets every answer.
func ServeStdio(ctx context.Context, c *client.Client, o Options, in io.Reader, out io.Writer) error {
	p := &pending{ctx: ctx}
	p.cond = sync.NewCond(&p.mu)
	stop := context.AfterFunc(ctx, p.wake)
	defer stop()
	err := NewServer(c, o).Run(ctx, &sdk.IOTransport{Reader: &countingReader{r: in, p: p}, Writer: &countingWriter{w: out, p: p}})
	if errors.Is(err, io.EOF) {
		return nil // the client hung up
	}
	return err
}

// pending are the requests read and not yet answered, by id.
type pending struct {
	ctx  context.Context
	mu   sync.Mutex
	cond *sync.Cond
	ids  map[string]bool
}

// mark adds the ids of requests read, and removes those answered.
func (p *pending) mark(add, done []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = map[string]bool{}
	}
	for _, id := range add {
		p.ids[id] = true
	}
	for _, id := range done {
		delete(p.ids, id)
	}
	p.cond.Broadcast()
}

func (p *pending) wake() { p.mark(nil, nil) }

// drain waits until every request read has been answered, or ctx ends.
func (p *pending) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.ids) > 0 && p.ctx.Err() == nil {
		p.cond.Wait()
	}
}

// message is what the counting needs of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// lines calls f with each complete line of buf and returns what remains
// after the last newline.
func lines(buf []byte, f func(m message)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return buf
		}
		var m message
		if json.Unmarshal(buf[:i], &m) == nil {
			f(m)
		}
		buf = buf[i+1:]
	}
}

// idKey is a request id in one form whatever its spelling (1, 1.0).
func idKey(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// countingReader reads the client's messages, marking its requests
// pending; at the end of its input it waits for their answers (a
// cancelled request is answered too) before it ends.
type countingReader struct {
	r    io.Reader
	p    *pending
	line []byte
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	buf := append(c.line, b[:n]...)
	if errors.Is(err, io.EOF) {
		// A last line without its newline is a message too.
		buf = append(buf, '\n')
	}
	var add []string
	c.line = lines(buf, func(m message) {
		if m.ID != nil && m.Method != "" {
			add = append(add, idKey(m.ID))
		}
	})
	c.p.mark(add, nil)
	if errors.Is(err, io.EOF) {
		c.p.drain()
	}
	return n, err
}

func (c *countingReader) Close() error { return nil }

// countingWriter writes the server's messages, marking the requests they
// answer done.
type countingWriter struct {
	w    io.Writer
	p    *pending
	line []byte
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	var done []string
	c.line = lines(append(c.line, b[:n]...), func(m message) {
		if m.ID != nil && m.Method == "" {
			done = append(done, idKey(m.ID))
		}
	})
	c.p.mark(nil, done)
	return n, err
}

// Close leaves what it writes to (the process's standard output) open.
func (c *countingWriter) Close() error { return nil }
