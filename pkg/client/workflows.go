package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// Workflow run statuses (WorkflowRun.Status).
const (
	WorkflowPending   = "pending"
	WorkflowRunning   = "running"
	WorkflowSucceeded = "succeeded"
	WorkflowFailed    = "failed"
	WorkflowCancelled = "cancelled"
)

// Workflow step types (WorkflowStep.Type) and statuses
// (WorkflowStepState.Status).
const (
	StepExec      = "exec"
	StepPrompt    = "prompt"
	StepTask      = "task"
	StepPending   = "pending"
	StepRunning   = "running"
	StepSucceeded = "succeeded"
	StepFailed    = "failed"
	StepCancelled = "cancelled"
	StepSkipped   = "skipped"
)

// WorkflowDone reports whether a run in status has ended.
func WorkflowDone(status string) bool { return status != WorkflowPending && status != WorkflowRunning }

// CreateWorkflow creates a workflow on the runtime; its first run starts
// at once (LastRun, pending).
func (c *Client) CreateWorkflow(ctx context.Context, org, ws, runtimeID string, req CreateWorkflowRequest) (Workflow, error) {
	return call[Workflow](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "workflows"), nil, req)
}

// ListWorkflows lists one page of the runtime's workflows, oldest first.
func (c *Client) ListWorkflows(ctx context.Context, org, ws, runtimeID string, opts ListOptions) (List[Workflow], error) {
	return call[List[Workflow]](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "workflows"), opts.query(), nil)
}

// GetWorkflow returns a workflow (by id or name) with its newest run.
func (c *Client) GetWorkflow(ctx context.Context, org, ws, runtimeID, workflow string) (Workflow, error) {
	return call[Workflow](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "workflows", workflow), nil, nil)
}

// DeleteWorkflow deletes a workflow and its runs, cancelling a run in
// progress.
func (c *Client) DeleteWorkflow(ctx context.Context, org, ws, runtimeID, workflow string) error {
	return c.callDiscard(ctx, http.MethodDelete, runtimeRoute(org, ws, runtimeID, "workflows", workflow), nil, nil)
}

// CancelWorkflow cancels the workflow's run runID ("" for its newest)
// and returns it.
func (c *Client) CancelWorkflow(ctx context.Context, org, ws, runtimeID, workflow, runID string) (WorkflowRun, error) {
	return call[WorkflowRun](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "workflows", workflow, "cancel"),
		queryOf(map[string]string{"run_id": runID}, 0), nil)
}

// ListWorkflowRuns lists one page of a workflow's runs, newest first.
func (c *Client) ListWorkflowRuns(ctx context.Context, org, ws, runtimeID, workflow string, opts ListOptions) (List[WorkflowRun], error) {
	return call[List[WorkflowRun]](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "workflows", workflow, "runs"), opts.query(), nil)
}

// GetWorkflowRun returns one run of a workflow.
func (c *Client) GetWorkflowRun(ctx context.Context, org, ws, runtimeID, workflow, runID string) (WorkflowRun, error) {
	return call[WorkflowRun](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "workflows", workflow, "runs", runID), nil, nil)
}

// FollowWorkflow follows the workflow's run runID ("" for its newest)
// live: its status and steps, each step as its state changes, and its
// final status last. Ending ctx or closing the stream ends the request.
func (c *Client) FollowWorkflow(ctx context.Context, org, ws, runtimeID, workflow, runID string) (*WorkflowEventStream, error) {
	resp, err := c.open(ctx, http.MethodGet, runtimeRoute(org, ws, runtimeID, "workflows", workflow, "follow"),
		queryOf(map[string]string{"run_id": runID}, 0), nil, "", ndjson)
	if err != nil {
		return nil, err
	}
	return &WorkflowEventStream{body: resp.Body, dec: json.NewDecoder(resp.Body)}, nil
}

// WorkflowEventStream is a followed run's events in order. It is not
// safe for concurrent use.
type WorkflowEventStream struct {
	body  io.ReadCloser
	dec   *json.Decoder
	ended bool
}

// Next returns the next event, and io.EOF once the stream has ended after
// the run's final status (io.ErrUnexpectedEOF when it ended before).
// An error the server sent once the stream had begun is an *Error.
func (s *WorkflowEventStream) Next() (WorkflowEvent, error) {
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) && !s.ended {
			err = io.ErrUnexpectedEOF // the run had not ended
		}
		return WorkflowEvent{}, err
	}
	var e Error
	if json.Unmarshal(raw, &e) == nil && e.Code != "" {
		return WorkflowEvent{}, &e
	}
	var ev WorkflowEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, err
	}
	s.ended = ev.Type == "run" && WorkflowDone(ev.Status)
	return ev, nil
}

// Close ends the stream.
func (s *WorkflowEventStream) Close() error { return s.body.Close() }
