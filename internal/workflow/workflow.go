// Package workflow runs workflows: a named sequence of steps (a command,
// a harness prompt, an evaluation task) run in order on a runtime, each
// step's state (pending, running, succeeded, failed, cancelled, skipped)
// and output kept in the run's state document, optionally again on a
// schedule. Every run is kept.
//
// Runs are run by the one replica that holds the workflows lease
// (internal/lease): its loop picks up the runs that are pending or were
// left running, and starts the runs a schedule makes due. A run cut short
// (the server stopped, or lost the lease) is resumed where it stopped:
// the steps already ended stay as they are, and the step that was
// running is run again from its beginning (its attempts counted), so a
// step is run at least once and should be safe to run again.
package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/task"
)

// Step types.
const (
	StepExec   = "exec"
	StepPrompt = "prompt"
	StepTask   = "task"
)

// Step statuses: pending, running, and the final ones.
const (
	StepPending   = "pending"
	StepRunning   = "running"
	StepSucceeded = "succeeded"
	StepFailed    = "failed"
	StepCancelled = "cancelled"
	StepSkipped   = "skipped" // an earlier step failed, or the run was cancelled first
)

// Public error codes of workflows.
const (
	CodeNotFound    = "workflow_not_found"
	CodeRunNotFound = "workflow_run_not_found"
	CodeInvalid     = "invalid_workflow"
	CodeSchedule    = "invalid_schedule"
	CodeFinished    = "workflow_run_finished"
	CodeExists      = "workflow_exists"
	CodeShutting    = "shutting_down"
	// CodeInterrupted is not an error code of the API: a step's error
	// code when its server stopped and a cancel ended it before a resume.
	CodeInterrupted = "interrupted"
)

// Bounds of a workflow.
const (
	MaxSteps        = 64
	MaxName         = 100
	MaxArgs         = 256
	MaxOutputBytes  = 64 << 10 // kept of each of an exec step's stdout and stderr
	DefaultTimeout  = 10 * time.Minute
	MaxTimeout      = 6 * time.Hour
	specVersion     = 1
	stateVersion    = 1
	defaultWorkdir  = "/workspace"
	maxResultLength = 64 << 10
)

// Spec is a workflow's definition: stored as its row's spec.
type Spec struct {
	V        int    `json:"v"`
	Steps    []Step `json:"steps"`
	Schedule string `json:"schedule,omitempty"`
}

// Step is one step of a workflow. Type says which fields it uses: exec
// Argv, Env, Cwd; prompt Prompt, Harness, Model; task Argv or Prompt
// (with Harness, Model) and Score. TimeoutSeconds bounds each.
type Step struct {
	Name            string            `json:"name"`
	Type            string            `json:"type"`
	Argv            []string          `json:"argv,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	Cwd             string            `json:"cwd,omitempty"`
	Prompt          string            `json:"prompt,omitempty"`
	Harness         string            `json:"harness,omitempty"`
	Model           string            `json:"model,omitempty"`
	Score           []string          `json:"score,omitempty"`
	TimeoutSeconds  int64             `json:"timeout_seconds,omitempty"`
	ContinueOnError bool              `json:"continue_on_error,omitempty"`
}

// State is what a run has done so far: stored as its row's state.
type State struct {
	V          int         `json:"v"`
	Steps      []StepState `json:"steps"`
	Error      string      `json:"error,omitempty"`
	StartedAt  time.Time   `json:"started_at,omitzero"`
	FinishedAt time.Time   `json:"finished_at,omitzero"`
}

// StepState is one step's state in a run, and its output.
type StepState struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// Stdout and Stderr are an exec or task step's, bounded.
	Stdout          string `json:"stdout,omitempty"`
	Stderr          string `json:"stderr,omitempty"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
	// Result is a prompt step's last assistant message, or a prompt
	// task's answer; SessionID the prompt's session.
	Result    string          `json:"result,omitempty"`
	SessionID string          `json:"session_id,omitempty"`
	TaskID    string          `json:"task_id,omitempty"`
	Score     json.RawMessage `json:"score,omitempty"`
	// Error and ErrorCode say why a step failed (ErrorCode: the API's
	// code, such as harness_secret_missing).
	Error      string    `json:"error,omitempty"`
	ErrorCode  string    `json:"error_code,omitempty"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// Workflow is a stored workflow with its definition decoded.
type Workflow struct {
	store.Workflow
	Spec Spec
}

// Run is a stored run with its state decoded.
type Run struct {
	store.WorkflowRun
	State State
}

// Runtimes is what workflows use of the runtime service.
type Runtimes interface {
	AgentOf(ctx context.Context, rt store.Runtime) (*agentconn.Client, store.Runtime, error)
}

// Prompts runs harness turns (the session service).
type Prompts interface {
	Run(ctx context.Context, rt store.Runtime, t session.Turn, emit func(harness.Event) error) (session.Outcome, error)
}

// Tasks runs evaluation tasks (the task service).
type Tasks interface {
	Create(ctx context.Context, ws store.Workspace, r task.Request) (string, []task.Task, error)
	Get(ctx context.Context, ws store.Workspace, id string) (task.Task, error)
	Cancel(ctx context.Context, ws store.Workspace, id string) (task.Task, error)
}

// Store is what workflows use of the store.
type Store interface {
	store.Transactor
	store.WorkflowQueries
	GetRuntime(ctx context.Context, id string) (store.Runtime, error)
}

// Config configures a Service.
type Config struct {
	Store    Store
	Runtimes Runtimes
	Prompts  Prompts
	Tasks    Tasks
	Logger   *slog.Logger
	Now      func() time.Time
	// Poll is how often the loop looks for runs to start; 0: a second.
	Poll time.Duration
}

// Service makes, lists, cancels and deletes workflows, and (in Loop,
// under the workflows lease) runs them.
type Service struct {
	store    Store
	runtimes Runtimes
	prompts  Prompts
	tasks    Tasks
	logger   *slog.Logger
	now      func() time.Time
	poll     time.Duration
	wake     chan struct{}

	mu      sync.Mutex
	running map[string]*runner // runs running here, by id
	closed  bool
}

// runner is a run running here: how to cancel it, and when it has ended.
type runner struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// New makes a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	now := cfg.Now
	return &Service{store: cfg.Store, runtimes: cfg.Runtimes, prompts: cfg.Prompts, tasks: cfg.Tasks, logger: cfg.Logger,
		now: func() time.Time { return now().UTC().Truncate(time.Microsecond) }, poll: cfg.Poll,
		wake: make(chan struct{}, 1), running: map[string]*runner{}}
}

// Decode reads a stored workflow's definition.
func Decode(w store.Workflow) (Workflow, error) {
	out := Workflow{Workflow: w}
	if err := json.Unmarshal(w.Spec, &out.Spec); err != nil {
		return out, fmt.Errorf("workflow %s: decode spec: %w", w.ID, err)
	}
	return out, nil
}

// DecodeRun reads a stored run's state.
func DecodeRun(r store.WorkflowRun) (Run, error) {
	out := Run{WorkflowRun: r}
	if err := json.Unmarshal(r.State, &out.State); err != nil {
		return out, fmt.Errorf("workflow run %s: decode state: %w", r.ID, err)
	}
	return out, nil
}

// publicText is an error's public message, never its cause's text.
func publicText(err error) string {
	return errdefs.PublicMessage(err, "an internal error")
}

// publicCode is an error's public code, or "".
func publicCode(err error) string {
	if pe, ok := errdefs.Public(err); ok {
		return pe.Code
	}
	return ""
}
