// Package task runs evaluation tasks: a command run with a time limit in
// a sandbox of kind task, made through the runtime service from a
// runtime's configuration (or one given inline), its exit, output and
// score recorded, its sandbox billed and killed when it ends. A batch of
// tasks runs with a concurrency limit: never more than its limit of
// sandboxes at once.
//
// A task is a store row (store.Task) whose spec and result are this
// package's versioned documents (Spec, Result). Tasks run on the server
// (replica) that made them, their runner; one that was pending or running
// when its runner stopped is failed, its sandbox killed as interrupted,
// by its runner's next start or, once its runner's presence has lapsed,
// by any replica's reconciliation (see Service.Reconcile and Sweep).
package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/store"
)

// Bounds of a task request.
const (
	DefaultTimeout  = 10 * time.Minute
	MaxTimeout      = 24 * time.Hour
	MaxCount        = 100
	MaxConcurrency  = 32
	MaxArgs         = 256
	ScoreTimeout    = time.Minute // the score command's own limit
	MaxOutputBytes  = 64 << 10    // kept of each of stdout and stderr
	maxScoreBytes   = 64 << 10
	specVersion     = 1
	resultVersion   = 1
	reasonRestarted = "the server stopped while the task was pending or running"
)

// Spec is what a task was asked to do: stored as its row's spec.
type Spec struct {
	V int `json:"v"`
	// RuntimeID is the runtime whose configuration the sandbox was made
	// from; "" for an inline configuration.
	RuntimeID string `json:"runtime_id,omitempty"`
	ProjectID string `json:"project_id,omitempty"`
	// Template is the template (by name) the configuration came from.
	Template string `json:"template,omitempty"`
	// SnapshotID is the snapshot the configuration came from: its
	// workspace files are copied into the sandbox before argv runs.
	SnapshotID string              `json:"snapshot_id,omitempty"`
	Config     store.RuntimeConfig `json:"config"`
	Argv       []string            `json:"argv"`
	// Env is given to argv's process: a harness's, for a prompt.
	Env map[string]string `json:"env,omitempty"`
	// Prompt, Harness and Model say the harness turn argv runs, when
	// the task is a prompt.
	Prompt         string   `json:"prompt,omitempty"`
	Harness        string   `json:"harness,omitempty"`
	Model          string   `json:"model,omitempty"`
	Score          []string `json:"score,omitempty"`
	TimeoutSeconds int64    `json:"timeout_seconds"`
	// Concurrency is its batch's limit of tasks running at once.
	Concurrency int `json:"concurrency"`
}

// Result is what came of a task: stored as its row's result.
type Result struct {
	V        int  `json:"v"`
	ExitCode *int `json:"exit_code,omitempty"`
	// Answer is a prompt's last assistant message, read from the
	// harness's stream.
	Answer          string          `json:"answer,omitempty"`
	Stdout          string          `json:"stdout,omitempty"`
	Stderr          string          `json:"stderr,omitempty"`
	StdoutTruncated bool            `json:"stdout_truncated,omitempty"`
	StderrTruncated bool            `json:"stderr_truncated,omitempty"`
	Score           json.RawMessage `json:"score,omitempty"`
	ScoreError      string          `json:"score_error,omitempty"`
	Error           string          `json:"error,omitempty"`
	StartedAt       time.Time       `json:"started_at,omitzero"`
	FinishedAt      time.Time       `json:"finished_at,omitzero"`
}

// Task is a stored task with its documents decoded.
type Task struct {
	store.Task
	Spec   Spec
	Result Result
}

// Runtimes is what tasks use of the runtime service.
type Runtimes interface {
	TaskSource(ctx context.Context, ws store.Workspace, req store.RuntimeConfig) (store.Runtime, error)
	StartTaskSandbox(ctx context.Context, id string, src store.Runtime, limit time.Duration) (store.Sandbox, error)
	TaskAgent(sb store.Sandbox) (*agentconn.Client, error)
	EndTaskSandbox(ctx context.Context, sandboxID, reason string) (store.Sandbox, error)
}

// Snapshots is what tasks use of the snapshot service: a task made from
// a snapshot has its workspace files copied in before its command runs.
type Snapshots interface {
	// Get returns the snapshot id of ws; another workspace's is not found.
	Get(ctx context.Context, ws store.Workspace, id string) (store.Snapshot, error)
	// FillWorkspace extracts the snapshot id of workspace wsID into the
	// workspace of the sandbox whose agent is c.
	FillWorkspace(ctx context.Context, c *agentconn.Client, wsID, id string) error
}

// Store is what tasks use of the store.
type Store interface {
	store.Transactor
	CreateTask(ctx context.Context, t store.Task) error
	GetTask(ctx context.Context, id string) (store.Task, error)
	ListTasks(ctx context.Context, f store.TaskFilter, page store.Page) ([]store.Task, string, error)
	UpdateTask(ctx context.Context, t store.Task, from string) (bool, error)
	ListUnfinishedTasks(ctx context.Context) ([]store.Task, error)
}

// Config configures a Service.
type Config struct {
	Store    Store
	Runtimes Runtimes
	// Snapshots copies a snapshot's files into a task's sandbox; without
	// it, a task cannot be made from a snapshot.
	Snapshots Snapshots
	// Replicas tells this replica's id, recorded as the runner of the
	// tasks it makes, and which replicas are live, so a reconciliation
	// ends only the tasks no live replica runs; nil: one server alone,
	// whose start-up reconciliation ends every unfinished task and which
	// sweeps nothing while it runs.
	Replicas lease.Replicas
	Logger   *slog.Logger
	Now      func() time.Time
}

// Service makes, runs, lists and cancels tasks. It owns the goroutines
// that run them: Close cancels them and waits.
type Service struct {
	store     Store
	runtimes  Runtimes
	snapshots Snapshots
	replicas  lease.Replicas
	logger    *slog.Logger
	now       func() time.Time

	base    context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[string]*runner // running here, by task id
	closed  bool
}

// New makes a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	base, stop := context.WithCancel(context.Background())
	return &Service{store: cfg.Store, runtimes: cfg.Runtimes, snapshots: cfg.Snapshots, replicas: cfg.Replicas, logger: cfg.Logger, now: cfg.Now,
		base: base, stop: stop, running: map[string]*runner{}}
}

// Close cancels the tasks running here and waits for their goroutines,
// which record them as failed and kill their sandboxes.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
	return nil
}

// Interrupted reports whether t ended because the server running it
// stopped, not by its own outcome or a caller's cancel.
func Interrupted(t Task) bool {
	return t.Status == store.TaskFailed && t.Result.Error == reasonRestarted
}

// Decode reads a stored task's documents.
func Decode(t store.Task) (Task, error) {
	out := Task{Task: t}
	if err := json.Unmarshal(t.Spec, &out.Spec); err != nil {
		return out, fmt.Errorf("task %s: decode spec: %w", t.ID, err)
	}
	if err := json.Unmarshal(t.Result, &out.Result); err != nil {
		return out, fmt.Errorf("task %s: decode result: %w", t.ID, err)
	}
	return out, nil
}

// Get returns the task id of workspace ws; another workspace's is not
// found.
func (s *Service) Get(ctx context.Context, ws store.Workspace, id string) (Task, error) {
	t, err := s.store.GetTask(ctx, id)
	if err == nil && t.WorkspaceID != ws.ID {
		err = errdefs.NotFound(CodeNotFound, "task %s not found", id)
	}
	if err != nil {
		return Task{}, err
	}
	return Decode(t)
}

// List lists ws's tasks, or one batch's, oldest first.
func (s *Service) List(ctx context.Context, ws store.Workspace, batch string, page store.Page) ([]Task, string, error) {
	rows, next, err := s.store.ListTasks(ctx, store.TaskFilter{WorkspaceID: ws.ID, BatchID: batch}, page)
	if err != nil {
		return nil, "", err
	}
	out := make([]Task, 0, len(rows))
	for _, r := range rows {
		t, err := Decode(r)
		if err != nil {
			return nil, "", err
		}
		out = append(out, t)
	}
	return out, next, nil
}

// Public error codes of tasks.
const (
	CodeNotFound       = "task_not_found"
	CodeInvalid        = "invalid_task"
	CodeShuttingDown   = "shutting_down"
	CodeUnknownHarness = "unknown_harness"
)

// MaxPrompt bounds a prompt task's prompt.
const MaxPrompt = 256 << 10

// workdir is where a task's command runs.
const workdir = "/workspace"

// write stores t's status, sandbox and result if it is still in from.
func (s *Service) write(ctx context.Context, t Task, from string) (bool, error) {
	b, err := json.Marshal(t.Result)
	if err != nil {
		return false, err
	}
	t.Task.Result = b
	return s.store.UpdateTask(context.WithoutCancel(ctx), t.Task, from)
}

// newTask is a pending task of ws in batch doing spec.
func (s *Service) newTask(ws store.Workspace, batch string, spec Spec) (Task, error) {
	sb, err := json.Marshal(spec)
	if err != nil {
		return Task{}, err
	}
	rb, _ := json.Marshal(Result{V: resultVersion})
	row := store.Task{ID: uuid.NewString(), OrgID: ws.OrgID, WorkspaceID: ws.ID, BatchID: batch,
		Status: store.TaskPending, Spec: sb, Result: rb, CreatedAt: s.now().UTC(), Runner: s.replica()}
	return Task{Task: row, Spec: spec, Result: Result{V: resultVersion}}, nil
}

var errCancelled = errors.New("task cancelled")

// replica is this replica's id, the runner of the tasks it makes; "" for
// a server alone.
func (s *Service) replica() string {
	if s.replicas == nil {
		return ""
	}
	return s.replicas.Replica()
}

func itoa(n int) string { return strconv.Itoa(n) }

// runner is a task running here: how to cancel it, and when it has
// ended (its sandbox killed and its end recorded).
type runner struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}
