package store

import "context"

// Locker is what a store several servers share offers so that they take
// turns on one runtime: an optional interface a consumer type-asserts on
// the Store. The PostgreSQL store implements it with an advisory lock per
// runtime; the SQLite store, which only one server process opens, does
// not, and that server's own lock is enough.
type Locker interface {
	// LockRuntime blocks until this server holds runtime id's lock, which
	// every other server asking for it waits on, and returns the function
	// that releases it (call it once). The lock is not reentrant: a server
	// that asks twice for one id without releasing waits for itself, so it
	// serializes its own callers first. A ctx that ends while waiting
	// gives up, holding nothing, with ctx's error in the chain. A server
	// that dies (or loses its database connection) while holding a lock
	// releases it.
	LockRuntime(ctx context.Context, id string) (unlock func(), err error)
}
