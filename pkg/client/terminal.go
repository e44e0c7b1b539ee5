package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/coder/websocket"
)

// TerminalOptions describe a terminal session.
type TerminalOptions struct {
	// Argv is the command; empty means the sandbox's shell.
	Argv []string
	// Cwd is the working directory (absolute); empty means the sandbox's
	// home.
	Cwd string
	// Rows and Cols are the terminal's size; 0 means 24x80.
	Rows, Cols int
	// Term is TERM; empty means xterm-256color.
	Term string
	// User is the account to run as ("user" or "root"); empty means the
	// runtime's.
	User string
	// Attach re-attaches the terminal with this TerminalID (of a session
	// whose link dropped) instead of starting one, replaying its output
	// from byte Offset; Argv, Cwd, Term and User must then be empty.
	Attach string
	Offset int64
}

// maxTerminalMessage bounds one message from the server.
const maxTerminalMessage = 1 << 20

// Terminal is an interactive terminal in a sandbox, over a WebSocket:
// Read its output and Write its input. Read must not be called
// concurrently with itself; the other methods may be.
type Terminal struct {
	// ID and PID identify the terminal's process; TerminalID re-attaches
	// it (TerminalOptions.Attach) after a dropped link.
	ID         string
	PID        int
	TerminalID string

	conn   *websocket.Conn
	ctx    context.Context // the session's; see Terminal
	cancel context.CancelFunc

	buf  []byte
	off  int64 // offset of buf's end in the terminal's output
	exit *ExitStatus
	err  error

	closeOnce sync.Once
}

var _ io.ReadWriteCloser = (*Terminal)(nil)

// Terminal opens a terminal in the runtime's sandbox, or re-attaches one
// (opts.Attach). ctx bounds the whole session, not only the opening.
// Closing the terminal ends the session and kills its processes; a
// session whose link drops (ctx ends, the network fails) leaves them to be
// re-attached within the server's grace.
func (c *Client) Terminal(ctx context.Context, org, ws, runtimeID string, opts TerminalOptions) (*Terminal, error) {
	r := runtimeRoute(org, ws, runtimeID, "terminal")
	if r.err != nil {
		return nil, r.err
	}
	q := url.Values{}
	if opts.Rows != 0 {
		q.Set("rows", strconv.Itoa(opts.Rows))
	}
	if opts.Cols != 0 {
		q.Set("cols", strconv.Itoa(opts.Cols))
	}
	if opts.Term != "" {
		q.Set("term", opts.Term)
	}
	if opts.Cwd != "" {
		q.Set("cwd", opts.Cwd)
	}
	if opts.User != "" {
		q.Set("user", opts.User)
	}
	for _, a := range opts.Argv {
		q.Add("argv", a)
	}
	if opts.Attach != "" {
		q.Set("attach", opts.Attach)
		q.Set("offset", strconv.FormatInt(opts.Offset, 10))
	}
	h := http.Header{}
	c.identify(h)
	ctx, cancel := context.WithCancel(ctx)
	conn, resp, err := websocket.Dial(ctx, c.endpoint(r.path, q), &websocket.DialOptions{HTTPClient: c.http, HTTPHeader: h})
	if err != nil {
		cancel()
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, decodeError(resp)
		}
		return nil, fmt.Errorf("paddock: open the terminal: %w", err)
	}
	conn.SetReadLimit(maxTerminalMessage)
	t := &Terminal{conn: conn, ctx: ctx, cancel: cancel}
	m, err := t.next()
	if err == nil && (m == nil || m.Type != TerminalStarted) {
		err = errors.New("paddock: the terminal did not start with a started message")
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	t.ID, t.PID, t.TerminalID, t.off = m.ID, m.PID, m.TerminalID, m.Offset
	return t, nil
}

// Offset returns the offset in the terminal's output of the next byte Read
// returns: what to re-attach from.
func (t *Terminal) Offset() int64 { return t.off - int64(len(t.buf)) }

// next reads one message: output into t.buf (returning nil), or a control
// message.
func (t *Terminal) next() (*TerminalMessage, error) {
	typ, data, err := t.conn.Read(t.ctx)
	if err != nil {
		if t.exit != nil && websocket.CloseStatus(err) == websocket.StatusNormalClosure {
			return nil, io.EOF
		}
		if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("paddock: terminal: %w", err)
	}
	if typ == websocket.MessageBinary {
		t.buf = data
		t.off += int64(len(data))
		return nil, nil
	}
	var m TerminalMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("paddock: terminal: a control message is not JSON: %w", err)
	}
	return &m, nil
}

// Read reads the terminal's output. It returns io.EOF once the terminal's
// process has exited and all its output is read; see Exit.
func (t *Terminal) Read(p []byte) (int, error) {
	for len(t.buf) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		m, err := t.next()
		if err != nil {
			t.err = err
			continue
		}
		if m == nil {
			continue
		}
		switch m.Type {
		case TerminalExit:
			t.exit = m.Exit
			if t.exit == nil {
				t.exit = &ExitStatus{}
			}
		case TerminalError:
			if m.Error != nil {
				m.Error.setStreamStatus()
				if IsCode(m.Error, "invalid_message") || IsCode(m.Error, "invalid_size") || IsCode(m.Error, "invalid_signal") {
					// A refused control message; the session goes on.
					continue
				}
				t.err = m.Error
			}
		}
	}
	n := copy(p, t.buf)
	t.buf = t.buf[n:]
	return n, nil
}

// Write sends input to the terminal (keystrokes: "\x03" is Ctrl-C).
func (t *Terminal) Write(p []byte) (int, error) {
	if err := t.conn.Write(t.ctx, websocket.MessageBinary, p); err != nil {
		return 0, fmt.Errorf("paddock: terminal: %w", err)
	}
	return len(p), nil
}

func (t *Terminal) control(m TerminalMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := t.conn.Write(t.ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("paddock: terminal: %w", err)
	}
	return nil
}

// Resize changes the terminal's size.
func (t *Terminal) Resize(rows, cols int) error {
	if rows <= 0 || cols <= 0 || rows > 0xffff || cols > 0xffff {
		return fmt.Errorf("%w: terminal size %dx%d is out of range", ErrInvalidArgument, rows, cols)
	}
	return t.control(TerminalMessage{Type: TerminalResize, Rows: rows, Cols: cols})
}

// Signal sends a signal ("INT", "TERM", …) to the terminal's process
// group.
func (t *Terminal) Signal(sig string) error {
	return t.control(TerminalMessage{Type: TerminalSignal, Signal: sig})
}

// Exit returns how the terminal's process ended, once Read has returned
// io.EOF.
func (t *Terminal) Exit() (ExitStatus, bool) {
	if t.exit == nil {
		return ExitStatus{}, false
	}
	return *t.exit, true
}

// Close ends the session and the terminal's processes.
func (t *Terminal) Close() error {
	t.closeOnce.Do(func() {
		_ = t.control(TerminalMessage{Type: TerminalClose})
		_ = t.conn.Close(websocket.StatusNormalClosure, "")
		t.cancel()
	})
	return nil
}
