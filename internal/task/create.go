package task

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/capability"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/store"
)

// Request asks for a batch of Count tasks, Concurrency of them at most
// running at once, each running Argv (then Score, when given) in a
// sandbox made from Source with a time limit of Timeout.
type Request struct {
	// Source is the runtime the sandboxes are made from (its id set), or
	// an inline configuration (Runtimes.TaskSource).
	Source store.Runtime
	// Template names the template Source was made from, to record.
	Template string
	// SnapshotID is the snapshot Source was made from: its workspace
	// files are copied into each task's sandbox before Argv runs.
	SnapshotID string
	// Argv is the command; or Prompt, a turn of Harness (default
	// harness.Default) with Model, run to completion.
	Argv        []string
	Prompt      string
	Harness     string
	Model       string
	Score       []string
	Timeout     time.Duration // 0: DefaultTimeout
	Count       int           // 0: 1
	Concurrency int           // 0: Count
}

func invalid(format string, args ...any) error {
	return errdefs.InvalidArgument(CodeInvalid, format, args...)
}

// check validates r and fills its defaults.
func (r *Request) check() error {
	if r.Timeout == 0 {
		r.Timeout = DefaultTimeout
	}
	if r.Count == 0 {
		r.Count = 1
	}
	if r.Concurrency == 0 {
		r.Concurrency = min(r.Count, MaxConcurrency)
	}
	switch {
	case (len(r.Argv) == 0) == (r.Prompt == ""):
		return invalid("give argv (the command to run, as a list of arguments) or prompt, one of them")
	case r.Prompt == "" && (r.Harness != "" || r.Model != ""):
		return invalid("harness and model go with a prompt")
	case len(r.Argv) > 0 && r.Argv[0] == "":
		return invalid("argv must name a command")
	case len(r.Prompt) > MaxPrompt:
		return invalid("the prompt is longer than %d bytes", MaxPrompt)
	case len(r.Argv) > MaxArgs || len(r.Score) > MaxArgs:
		return invalid("argv and score take at most %d arguments", MaxArgs)
	case len(r.Score) > 0 && r.Score[0] == "":
		return invalid("score must name a command")
	case r.Timeout < time.Second || r.Timeout > MaxTimeout:
		return invalid("timeout_seconds must be between 1 and %d", int64(MaxTimeout/time.Second))
	case r.Count < 1 || r.Count > MaxCount:
		return invalid("count must be between 1 and %d", MaxCount)
	case r.Concurrency < 1 || r.Concurrency > MaxConcurrency:
		return invalid("concurrency must be between 1 and %d", MaxConcurrency)
	}
	for _, a := range append(append(r.Argv, r.Score...), r.Prompt, r.Model) {
		if strings.ContainsRune(a, 0) {
			return invalid("an argument contains a NUL byte")
		}
	}
	return nil
}

// spec is what r asks each task to do: a prompt becomes its harness's
// command line for one non-interactive turn.
func (r *Request) spec() (Spec, error) {
	spec := Spec{V: specVersion, RuntimeID: r.Source.ID, ProjectID: r.Source.ProjectID, Template: r.Template,
		SnapshotID: r.SnapshotID, Config: r.Source.Config,
		Argv: r.Argv, Score: r.Score, TimeoutSeconds: int64(r.Timeout / time.Second), Concurrency: r.Concurrency}
	if r.Prompt == "" {
		return spec, nil
	}
	name := cmp.Or(r.Harness, harness.Default)
	h, ok := harness.Lookup(name)
	if !ok {
		return spec, errdefs.InvalidArgument(CodeUnknownHarness, "unknown harness %q; GET /api/capabilities lists them", name)
	}
	spec.Prompt, spec.Harness, spec.Model = r.Prompt, h.Name, r.Model
	spec.Argv, spec.Env = h.Command(harness.Invocation{Prompt: r.Prompt, Model: r.Model, Workdir: workdir, CapRoot: capability.Root})
	return spec, nil
}

// Create records a batch of r.Count pending tasks of ws in one
// transaction and starts running them, r.Concurrency at a time; it
// returns the batch's id and its tasks as recorded.
func (s *Service) Create(ctx context.Context, ws store.Workspace, r Request) (string, []Task, error) {
	if err := r.check(); err != nil {
		return "", nil, err
	}
	spec, err := r.spec()
	if err != nil {
		return "", nil, err
	}
	batch := uuid.NewString()
	tasks := make([]Task, 0, r.Count)
	for range r.Count {
		t, err := s.newTask(ws, batch, spec)
		if err != nil {
			return "", nil, err
		}
		tasks = append(tasks, t)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return "", nil, errdefs.Unavailable(CodeShuttingDown, "the server is shutting down")
	}
	err = s.store.InTx(ctx, func(q store.Queries) error {
		for _, t := range tasks {
			if err := q.CreateTask(ctx, t.Task); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		// Recorded but not run: the next start's reconciliation fails them.
		return "", nil, errdefs.Unavailable(CodeShuttingDown, "the server is shutting down")
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.runBatch(tasks, r.Concurrency)
	}()
	return batch, tasks, nil
}
