// Package e2e holds paddock's end-to-end tests: the real API, the real
// SQLite store and the real Docker engine together, and the built paddock
// binary serving, stopping on SIGTERM and restarting. It has no non-test
// code.
package e2e
