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

// pending counts the requests read and not yet answered.
type pending struct {
	ctx  context.Context
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

func (p *pending) add(d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += d
	p.cond.Broadcast()
}

func (p *pending) wake() { p.add(0) }

// drain waits until every request read has been answered, or ctx ends.
func (p *pending) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.n > 0 && p.ctx.Err() == nil {
		p.cond.Wait()
	}
}

// messages counts the JSON-RPC requests (requests: true) or responses in
// complete lines of buf, and returns what remains after the last newline.
func messages(buf []byte, requests bool) (n int, rest []byte) {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return n, buf
		}
		var one struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(buf[:i], &one) == nil && one.ID != nil && (one.Method != "") == requests {
			n++
		}
		buf = buf[i+1:]
	}
}

// countingReader reads the client's messages, counting its requests; at
// the end of its input it waits for their answers before it ends.
type countingReader struct {
	r    io.Reader
	p    *pending
	line []byte
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	var k int
	k, c.line = messages(append(c.line, b[:n]...), true)
	c.p.add(k)
	if errors.Is(err, io.EOF) {
		// A last line without its newline is a message too.
		k, _ = messages(append(c.line, '\n'), true)
		c.line = nil
		c.p.add(k)
		c.p.drain()
	}
	return n, err
}

func (c *countingReader) Close() error { return nil }

// countingWriter writes the server's messages, counting its answers.
type countingWriter struct {
	w    io.Writer
	p    *pending
	line []byte
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	var k int
	k, c.line = messages(append(c.line, b[:n]...), false)
	c.p.add(-k)
	return n, err
}

// Close leaves what it writes to (the process's standard output) open.
func (c *countingWriter) Close() error { return nil }
