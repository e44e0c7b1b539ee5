package api

import "testing"

// SetTerminalHook has hook called, until t ends, as a terminal's request
// is about to register in live ("open") and as its session reaches a
// point of its end: "cut" (its context ended), "end" (its handler ends
// it), "park" (it is about to park a detached terminal).
func SetTerminalHook(t testing.TB, hook func(point, termID string)) {
	terminalHooked.Store(&hook)
	t.Cleanup(func() { terminalHooked.Store(nil) })
}
