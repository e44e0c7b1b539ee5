package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// The evaluation tasks: `paddock task run|ls|show|cancel`, beside
// `paddock task RUNTIME PROMPT` (a harness turn; prompt.go).

var taskColumns = []column[client.Task]{
	{"ID", func(t client.Task) string { return t.ID }},
	{"BATCH", func(t client.Task) string { return short(t.BatchID, 8) }},
	{"STATUS", func(t client.Task) string { return t.Status }},
	{"EXIT", func(t client.Task) string { return exitOf(t) }},
	{"SCORE", func(t client.Task) string { return oneLine(string(t.Score), 40) }},
	{"SANDBOX", func(t client.Task) string { return t.SandboxID }},
	{"CREATED", func(t client.Task) string { return ts(t.CreatedAt) }},
}

func exitOf(t client.Task) string {
	if t.ExitCode == nil {
		return ""
	}
	return strconv.Itoa(*t.ExitCode)
}

type taskRunOptions struct {
	runtime, image, score  string
	template, snapshot     string
	prompt, harness, model string
	timeout                time.Duration
	count, concurrency     int
	wait                   bool
}

func (a *app) taskRunCmd(sc *scope) *cobra.Command {
	var o taskRunOptions
	cmd := &cobra.Command{
		Use:   "run [flags] [--] COMMAND [ARG...] | run --prompt PROMPT [flags]",
		Short: "Run a command as an evaluation task, or a batch of them, in sandboxes of their own",
		Long: `Run COMMAND in a new sandbox of kind task made from one source: a runtime's
configuration (--runtime; its workspace is not copied), a template (--template),
a snapshot (--snapshot: its configuration, and its workspace files copied in
first), or an image (--image; by default the installation's), with a time limit; its exit code, output and score (the JSON --score prints, run
after COMMAND in the same sandbox) are recorded and the sandbox is killed.
--prompt runs one turn of an agent harness instead (--harness, --model; the
runtime's secrets must hold its model credential) and records its answer.
--count runs a batch of that many, --concurrency of them at once at most.
--wait waits for them to end, prints them, and exits 1 unless all succeeded.`,
		Example: `  paddock task run --runtime agent -- pytest -q
  paddock task run --snapshot 0b6f… --score 'cat score.json' -- make test
  paddock task run --runtime agent --count 20 --concurrency 4 --score 'cat score.json' --wait -- ./eval.sh`,
		Args: func(_ *cobra.Command, args []string) error {
			if (len(args) == 0) == (o.prompt == "") {
				return usagef("expected the COMMAND to run, or --prompt, one of them")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.taskRun(cmd.Context(), sc, o, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	fl := cmd.Flags()
	fl.StringVar(&o.runtime, "runtime", "", "the runtime (name or id) whose configuration the sandboxes take")
	fl.StringVar(&o.image, "image", "", "make the sandboxes from this image instead of a runtime")
	fl.StringVar(&o.template, "template", "", "make the sandboxes from this template (name or id)")
	fl.StringVar(&o.snapshot, "snapshot", "", "make the sandboxes from this snapshot (id): its configuration and workspace files")
	fl.StringVar(&o.prompt, "prompt", "", "run a turn of an agent harness with this prompt instead of a command")
	fl.StringVar(&o.harness, "harness", "", "the prompt's harness (default: claude-code)")
	fl.StringVar(&o.model, "model", "", "the prompt's model (default: the harness's)")
	fl.StringVar(&o.score, "score", "", "a shell command whose JSON output is the score")
	fl.DurationVar(&o.timeout, "timeout", 0, "the command's time limit (default 10m)")
	fl.IntVar(&o.count, "count", 0, "how many tasks (default 1)")
	fl.IntVar(&o.concurrency, "concurrency", 0, "how many run at once at most (default all)")
	fl.BoolVar(&o.wait, "wait", false, "wait for the tasks to end and print them")
	return cmd
}

// taskRun is `task run`.
func (a *app) taskRun(ctx context.Context, sc *scope, o taskRunOptions, argv []string) error {
	given := 0
	for _, v := range []string{o.runtime, o.image, o.template, o.snapshot} {
		if v != "" {
			given++
		}
	}
	if given > 1 {
		return usagef("give one of --runtime, --image, --template and --snapshot")
	}
	secs, err := durationSeconds("timeout", o.timeout, true)
	if err != nil {
		return err
	}
	req := client.CreateTasksRequest{Argv: argv, Prompt: o.prompt, Harness: o.harness, Model: o.model,
		TimeoutSeconds: secs, Count: o.count, Concurrency: o.concurrency}
	if o.score != "" {
		req.Score = []string{"sh", "-c", o.score}
	}
	s, err := a.workspaceSession(sc)
	if err != nil {
		return err
	}
	switch {
	case o.runtime != "":
		if req.RuntimeID, err = a.runtimeID(ctx, s.c, s.org, s.ws, o.runtime); err != nil {
			return err
		}
	case o.template != "":
		req.Template = o.template
	case o.snapshot != "":
		req.Snapshot = o.snapshot
	default:
		req.Runtime = &client.RuntimeConfig{Image: o.image}
	}
	b, err := s.c.CreateTasks(ctx, s.org, s.ws, req)
	if err != nil {
		return err
	}
	if !o.wait {
		if a.output == outputJSON {
			return a.printJSON(b)
		}
		return printList(a, client.List[client.Task]{Items: b.Tasks}, taskColumns)
	}
	return a.taskWait(ctx, s, b.ID)
}

// taskWait waits for batch to end, prints its tasks, and fails unless
// every one succeeded.
func (a *app) taskWait(ctx context.Context, s session, batch string) error {
	for {
		b, err := s.c.GetTaskBatch(ctx, s.org, s.ws, batch)
		if err != nil {
			return err
		}
		if b.Statuses[client.TaskPending]+b.Statuses[client.TaskRunning] == 0 {
			if err := printList(a, client.List[client.Task]{Items: b.Tasks}, taskColumns); err != nil {
				return err
			}
			if b.Statuses[client.TaskSucceeded] != b.Count {
				return exitCode(ExitError)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (a *app) taskListCmd(sc *scope) *cobra.Command {
	var batch string
	cmd := listCmd(a, "List the workspace's evaluation tasks, oldest first", taskColumns,
		func(ctx context.Context, page client.ListOptions) (client.List[client.Task], error) {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return client.List[client.Task]{}, err
			}
			return s.c.ListTasks(ctx, s.org, s.ws, batch, page)
		})
	cmd.Flags().StringVar(&batch, "batch", "", "only this batch's tasks")
	return cmd
}

func (a *app) taskShowCmd(sc *scope) *cobra.Command {
	return a.taskActionCmd(sc, "show", "Show an evaluation task: status, exit code, score and output",
		func(ctx context.Context, s session, id string) (client.Task, error) {
			return s.c.GetTask(ctx, s.org, s.ws, id)
		})
}

func (a *app) taskCancelCmd(sc *scope) *cobra.Command {
	return a.taskActionCmd(sc, "cancel", "Cancel a pending or running evaluation task; its sandbox is killed",
		func(ctx context.Context, s session, id string) (client.Task, error) {
			return s.c.CancelTask(ctx, s.org, s.ws, id)
		})
}

// taskActionCmd is `task VERB TASK`: it prints the task act returns.
func (a *app) taskActionCmd(sc *scope, verb, short string, act func(ctx context.Context, s session, id string) (client.Task, error)) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " TASK",
		Short: short,
		Args:  exactArgs("TASK"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			t, err := act(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			return a.printTask(t)
		},
	}
}

func (a *app) printTask(t client.Task) error {
	if err := a.printObject(t, []field{
		{"ID", t.ID}, {"BATCH", t.BatchID}, {"STATUS", t.Status}, {"EXIT", exitOf(t)},
		{"PROMPT", oneLine(t.Prompt, 80)}, {"HARNESS", t.Harness}, {"ANSWER", oneLine(t.Answer, 200)},
		{"SCORE", string(t.Score)}, {"SCORE_ERROR", t.ScoreError}, {"ERROR", t.Error},
		{"RUNTIME", t.RuntimeID}, {"IMAGE", t.Image}, {"SANDBOX", t.SandboxID},
		{"COMMAND", fmt.Sprintf("%q", t.Argv)}, {"TIMEOUT", strconv.FormatInt(t.TimeoutSeconds, 10) + "s"},
		{"CREATED", ts(t.CreatedAt)}, {"STARTED", tsp(t.StartedAt)}, {"FINISHED", tsp(t.FinishedAt)},
	}); err != nil || a.output == outputJSON {
		return err
	}
	w := a.env.Stdout
	for _, o := range []struct {
		name, text string
		cut        bool
	}{{"stdout", t.Stdout, t.StdoutTruncated}, {"stderr", t.Stderr, t.StderrTruncated}} {
		if o.text == "" {
			continue
		}
		note := ""
		if o.cut {
			note = " (truncated)"
		}
		fmt.Fprintf(w, "# %s%s\n%s", o.name, note, o.text)
		if o.text[len(o.text)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
	return nil
}
