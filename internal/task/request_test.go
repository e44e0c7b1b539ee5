package task

import (
	"errors"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// TestRequestDefaults: what a request leaves out takes its default, and
// a batch's concurrency never exceeds the most allowed.
func TestRequestDefaults(t *testing.T) {
	for _, tc := range []struct {
		in                 Request
		count, concurrency int
	}{
		{Request{Argv: []string{"true"}}, 1, 1},
		{Request{Argv: []string{"true"}, Count: 10}, 10, 10},
		{Request{Argv: []string{"true"}, Count: 100}, 100, MaxConcurrency},
		{Request{Argv: []string{"true"}, Count: 5, Concurrency: 2}, 5, 2},
	} {
		r := tc.in
		if err := r.check(); err != nil {
			t.Fatal(err)
		}
		if r.Count != tc.count || r.Concurrency != tc.concurrency || r.Timeout != DefaultTimeout {
			t.Errorf("%+v: count %d, concurrency %d, timeout %s", tc.in, r.Count, r.Concurrency, r.Timeout)
		}
	}
	bad := Request{Argv: []string{"a\x00b"}}
	if err := bad.check(); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("a NUL in an argument: %v", err)
	}
	long := Request{Argv: []string{"true"}, Timeout: 25 * time.Hour}
	if err := long.check(); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("a limit past a day: %v", err)
	}
}

// TestPromptSpec: a prompt becomes its harness's command line for one
// turn, the default harness when it names none; an unknown harness is
// refused.
func TestPromptSpec(t *testing.T) {
	r := Request{Prompt: "fix the tests", Model: "m1"}
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
	spec, err := r.spec()
	if err != nil {
		t.Fatal(err)
	}
	if spec.Harness != "claude-code" || len(spec.Argv) == 0 || spec.Argv[0] != "claude" || spec.Prompt != "fix the tests" || spec.Model != "m1" {
		t.Fatalf("spec %+v", spec)
	}
	r.Harness = "no-such-harness"
	if _, err := r.spec(); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Fatalf("an unknown harness: %v", err)
	}
}
