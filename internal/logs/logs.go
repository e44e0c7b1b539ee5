// Package logs is paddock's structured logging: a slog handler that adds
// the ids a context carries (request, runtime, sandbox) to every record
// logged with it, and keeps the recent records of each sandbox in memory,
// so `paddock sandbox logs ID` can show a sandbox's lifecycle without
// searching the server's output.
package logs

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"
)

type ctxKey struct{}

// Keys of the ids a context carries.
const (
	KeyRequest = "request_id"
	KeyRuntime = "runtime"
	KeySandbox = "sandbox"
)

// With returns ctx carrying the attribute key=value (one of the keys
// above): every record logged with the context gets it.
func With(ctx context.Context, key, value string) context.Context {
	if value == "" {
		return ctx
	}
	prev, _ := ctx.Value(ctxKey{}).([]slog.Attr)
	for _, a := range prev {
		if a.Key == key && a.Value.String() == value {
			return ctx
		}
	}
	return context.WithValue(ctx, ctxKey{}, append(slices.Clip(prev), slog.String(key, value)))
}

// New returns a logger writing JSON (format "json") or text to w at level,
// recording each sandbox's records into book (nil: none).
func New(w io.Writer, format string, level slog.Level, book *Book) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if format == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(&handler{inner: h, book: book})
}

// handler adds the context's ids to a record and books it under its
// sandbox.
type handler struct {
	inner slog.Handler
	book  *Book
	attrs []slog.Attr // from WithAttrs, to find a sandbox id
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if ids, _ := ctx.Value(ctxKey{}).([]slog.Attr); len(ids) > 0 {
		// A key the record or the logger already has is not repeated:
		// one object, one value per key.
		have := map[string]bool{}
		for _, a := range h.attrs {
			have[a.Key] = true
		}
		r.Attrs(func(a slog.Attr) bool { have[a.Key] = true; return true })
		r = r.Clone()
		for _, a := range ids {
			if !have[a.Key] {
				r.AddAttrs(a)
			}
		}
	}
	if h.book != nil {
		h.book.record(r, h.attrs)
	}
	return h.inner.Handle(ctx, r)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{inner: h.inner.WithAttrs(as), book: h.book, attrs: append(slices.Clip(h.attrs), as...)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), book: h.book, attrs: h.attrs}
}

// Entry is one booked record.
type Entry struct {
	Time    time.Time
	Level   string
	Message string
	Attrs   map[string]string
}

// Book keeps the most recent records of each sandbox: PerSandbox of them
// for each of the Sandboxes most recently logged about. It is memory only;
// a restart starts it empty (the ledger row keeps the lifecycle's
// timestamps, and the agent's own log is the provider's).
type Book struct {
	PerSandbox int
	Sandboxes  int

	mu    sync.Mutex
	books map[string][]Entry
	order []string // least recently logged first
}

// NewBook returns a book of 200 records for each of 1,000 sandboxes.
func NewBook() *Book { return &Book{PerSandbox: 200, Sandboxes: 1000} }

func (b *Book) record(r slog.Record, bound []slog.Attr) {
	e := Entry{Time: r.Time, Level: r.Level.String(), Message: r.Message, Attrs: map[string]string{}}
	add := func(a slog.Attr) bool {
		e.Attrs[a.Key] = a.Value.Resolve().String()
		return true
	}
	for _, a := range bound {
		add(a)
	}
	r.Attrs(add)
	id := e.Attrs[KeySandbox]
	if id == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.books == nil {
		b.books = map[string][]Entry{}
	}
	if _, ok := b.books[id]; ok {
		b.order = slices.DeleteFunc(b.order, func(s string) bool { return s == id })
	}
	b.order = append(b.order, id)
	es := append(b.books[id], e)
	if len(es) > b.PerSandbox {
		es = slices.Delete(es, 0, len(es)-b.PerSandbox)
	}
	b.books[id] = es
	for len(b.order) > b.Sandboxes {
		delete(b.books, b.order[0])
		b.order = b.order[1:]
	}
}

// Of returns the booked records of a sandbox, oldest first.
func (b *Book) Of(sandboxID string) []Entry {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.books[sandboxID])
}

// BookOf returns the book a logger made by New records into, or nil.
func BookOf(l *slog.Logger) *Book {
	if l == nil {
		return nil
	}
	if h, ok := l.Handler().(*handler); ok {
		return h.book
	}
	return nil
}
