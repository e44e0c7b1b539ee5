package agentauth

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
)

// Listener wraps the agent's listener: Accept returns only connections
// whose peer completed the handshake, which runs on a goroutine of its own
// per connection so a silent peer cannot hold up the others. Connections
// that fail it are closed and logged.
type Listener struct {
	inner net.Listener
	key   []byte
	log   *slog.Logger

	ctx    context.Context // done when the listener stops: ends handshakes
	cancel context.CancelFunc
	ready  chan net.Conn
	done   chan struct{}
	once   sync.Once
	err    error // the inner listener's terminal error, set before done closes
	wg     sync.WaitGroup
}

// NewListener starts accepting on l; every accepted connection must answer
// as the holder of key before Accept returns it.
func NewListener(l net.Listener, key []byte, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	al := &Listener{inner: l, key: key, log: log, ctx: ctx, cancel: cancel, ready: make(chan net.Conn), done: make(chan struct{})}
	al.wg.Add(1)
	go al.acceptLoop()
	return al
}

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.inner.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			l.stop(err)
			return
		}
		l.wg.Add(1)
		go l.handshake(c)
	}
}

func (l *Listener) handshake(c net.Conn) {
	defer l.wg.Done()
	if err := Answer(l.ctx, c, l.key); err != nil {
		// Anything in the sandbox can connect and fail: not worth a line
		// in a log that lives on the host.
		l.log.Debug("refused a connection that did not complete the handshake", "err", err)
		_ = c.Close()
		return
	}
	select {
	case l.ready <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *Listener) stop(err error) {
	l.once.Do(func() {
		if err == nil {
			err = net.ErrClosed
		}
		l.err = err
		l.cancel()
		close(l.done)
	})
}

// Accept returns the next verified connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

// Close stops accepting and waits for handshakes in progress to end.
func (l *Listener) Close() error {
	err := l.inner.Close()
	l.stop(net.ErrClosed)
	l.wg.Wait()
	return err
}

// Addr is the inner listener's address.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }
