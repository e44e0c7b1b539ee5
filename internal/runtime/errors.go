package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Stable public error codes of runtime actions.
const (
	CodeNoSandbox      = "runtime_has_no_sandbox"
	CodeAlreadyRunning = "runtime_already_running"
	CodeAlreadyPaused  = "runtime_already_paused"
	CodeNotPaused      = "runtime_not_paused"
	CodeBusy           = "runtime_busy"
	CodeInError        = "runtime_in_error"
	CodeProvision      = "provision_failed"
)

func errNoSandbox(name string, rt store.Runtime) error {
	return errdefs.Conflict(CodeNoSandbox, "runtime %s has no sandbox (status %s); start it first", name, rt.Status)
}

// statusConflict explains why action does not fit the runtime's status,
// naming the runtime name (see Service.name).
func statusConflict(action, name string, rt store.Runtime) error {
	switch rt.Status {
	case store.RuntimeIdle, store.RuntimeArchived:
		if action == "start" {
			break
		}
		return errNoSandbox(name, rt)
	case store.RuntimeStarting:
		return errdefs.Conflict(CodeBusy, "runtime %s is starting; try again when it is running", name)
	case store.RuntimeRunning:
		switch action {
		case "start":
			return errdefs.Conflict(CodeAlreadyRunning, "runtime %s is already running", name)
		case "resume":
			return errdefs.Conflict(CodeNotPaused, "runtime %s is running, not paused", name)
		}
	case store.RuntimePaused:
		switch action {
		case "start":
			return errdefs.Conflict(CodeAlreadyRunning, "runtime %s already has a sandbox (paused); resume it instead", name)
		case "pause":
			return errdefs.Conflict(CodeAlreadyPaused, "runtime %s is already paused", name)
		}
	case store.RuntimeError:
		if rt.CurrentSandboxID == "" {
			if action == "start" {
				return errdefs.Conflict(CodeInError, "runtime %s is in error (%s); reset it first", name, rt.StatusReason)
			}
			return errNoSandbox(name, rt)
		}
		return errdefs.Conflict(CodeInError, "runtime %s is in error (%s); reset it first", name, rt.StatusReason)
	}
	return errdefs.Conflict(CodeBusy, "cannot %s runtime %s in status %s", action, name, rt.Status)
}

// name is how errors name rt: by its project's name, which the user
// typed or sees in every listing; by its id where the project cannot be
// read.
func (s *Service) name(ctx context.Context, rt store.Runtime) string {
	if p, err := s.store.GetProject(ctx, rt.ProjectID); err == nil && p.Name != "" {
		return p.Name
	}
	return rt.ID
}

// lostRace turns a store version conflict into the public busy error.
func lostRace(rt store.Runtime, err error) error { return busyIfStale(rt.ID, err) }

// busyIfStale is the one place a lost optimistic race (store.ErrStale, on
// a runtime or sandbox row: another server on the same database acted
// first) becomes 409 runtime_busy; the store's own code never reaches a
// client.
func busyIfStale(runtimeID string, err error) error {
	if errors.Is(err, store.ErrStale) {
		if pe, ok := errdefs.Public(err); !ok || pe.Code != CodeBusy {
			return errdefs.Conflict(CodeBusy, "runtime %s changed while this action ran; try again", runtimeID).WithCause(err)
		}
	}
	return err
}

// providerFailure gives a provider error a public face while keeping its
// kind and cause.
func providerFailure(action string, err error) error {
	if _, ok := errdefs.Public(err); ok {
		return err
	}
	kind := errdefs.KindOf(err)
	if kind == nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	return (&errdefs.Error{Kind: kind, Code: CodeProvision, Message: "the sandbox provider could not " + action + " the sandbox"}).WithCause(err)
}
