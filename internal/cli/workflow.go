package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/paddockhq/paddock/pkg/client"
)

// Workflows: `paddock workflow run|ls|show|follow|cancel|rm`.

var workflowColumns = []column[client.Workflow]{
	{"ID", func(w client.Workflow) string { return w.ID }},
	{"NAME", func(w client.Workflow) string { return w.Name }},
	{"STEPS", func(w client.Workflow) string { return strconv.Itoa(len(w.Steps)) }},
	{"SCHEDULE", func(w client.Workflow) string { return w.Schedule }},
	{"LAST_RUN", func(w client.Workflow) string { return lastRunStatus(w) }},
	{"NEXT_RUN", func(w client.Workflow) string { return tsp(w.NextRunAt) }},
	{"CREATED", func(w client.Workflow) string { return ts(w.CreatedAt) }},
}

var workflowStepColumns = []column[client.WorkflowStepState]{
	{"STEP", func(s client.WorkflowStepState) string { return s.Name }},
	{"TYPE", func(s client.WorkflowStepState) string { return s.Type }},
	{"STATUS", func(s client.WorkflowStepState) string { return s.Status }},
	{"EXIT", func(s client.WorkflowStepState) string { return stepExit(s) }},
	{"ATTEMPTS", func(s client.WorkflowStepState) string { return strconv.Itoa(s.Attempts) }},
	{"OUTPUT", func(s client.WorkflowStepState) string { return oneLine(stepOutput(s), 60) }},
}

func lastRunStatus(w client.Workflow) string {
	if w.LastRun == nil {
		return ""
	}
	return w.LastRun.Status
}

func stepExit(s client.WorkflowStepState) string {
	if s.ExitCode == nil {
		return ""
	}
	return strconv.Itoa(*s.ExitCode)
}

// stepOutput is what a step's row shows: its error, else its result,
// score or output.
func stepOutput(s client.WorkflowStepState) string {
	switch {
	case s.Error != "":
		msg := s.Error
		if s.ErrorCode != "" {
			msg += " (" + s.ErrorCode + ")"
		}
		return msg
	case s.Result != "":
		return s.Result
	case len(s.Score) > 0:
		return "score " + string(s.Score)
	}
	return s.Stdout
}

const workflowArg = "WORKFLOW is a workflow's name or id on the runtime. " + runtimeArg

func (a *app) workflowCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("workflow", "Run named sequences of steps on a runtime, on a schedule, and follow them")
	scopeFlags(cmd, &sc, true)
	cmd.AddCommand(a.workflowRunCmd(&sc), a.workflowListCmd(&sc), a.workflowShowCmd(&sc),
		a.workflowFollowCmd(&sc), a.workflowCancelCmd(&sc), a.workflowRemoveCmd(&sc))
	return cmd
}

// readWorkflowFile reads a CreateWorkflowRequest from a YAML or JSON
// file ("-": stdin); an unknown key is refused.
func (a *app) readWorkflowFile(path string) (client.CreateWorkflowRequest, error) {
	var req client.CreateWorkflowRequest
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(a.env.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return req, err
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return req, usagef("%s: %v", path, err)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return req, usagef("%s: %v", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, usagef("%s: %v", path, err)
	}
	return req, nil
}

func (a *app) workflowRunCmd(sc *scope) *cobra.Command {
	var file, name, schedule string
	var follow bool
	cmd := &cobra.Command{
		Use:   "run RUNTIME -f FILE",
		Short: "Create a workflow on a runtime from a file of steps, and run it",
		Long: `Create a workflow from FILE (YAML or JSON; - reads stdin): its name, its
steps (type exec with argv, env, cwd; prompt with prompt, harness, model; task
with argv or prompt and score; each with timeout_seconds and continue_on_error)
and an optional schedule (a cron expression, @hourly, or @every 10m). Its
first run starts at once; --follow follows it and exits 1 unless it
succeeded. ` + runtimeArg,
		Example: `  paddock workflow run agent -f build.yaml --follow

  # build.yaml
  name: build
  steps:
    - {name: test, type: exec, argv: [make, test]}
    - {name: review, type: prompt, prompt: "review the diff"}`,
		Args: exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if file == "" {
				return usagef("give the workflow's file with -f")
			}
			req, err := a.readWorkflowFile(file)
			if err != nil {
				return err
			}
			if name != "" {
				req.Name = name
			}
			if schedule != "" {
				req.Schedule = schedule
			}
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			wf, err := t.c.CreateWorkflow(ctx, t.org, t.ws, t.rid, req)
			if err != nil {
				return err
			}
			if follow {
				return a.followRun(ctx, t, wf.ID, wf.LastRun.ID)
			}
			return a.printWorkflow(wf)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&file, "file", "f", "", "the workflow's file, YAML or JSON (- for stdin)")
	fl.StringVar(&name, "name", "", "the workflow's name (instead of the file's)")
	fl.StringVar(&schedule, "schedule", "", "run it again on this schedule (instead of the file's)")
	fl.BoolVar(&follow, "follow", false, "follow the first run until it ends")
	return cmd
}

func (a *app) workflowListCmd(sc *scope) *cobra.Command {
	var page client.ListOptions
	cmd := &cobra.Command{
		Use:     "ls RUNTIME",
		Aliases: []string{"list"},
		Short:   "List a runtime's workflows, oldest first, with their last run",
		Long:    "List a runtime's workflows. " + runtimeArg,
		Args:    exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			l, err := t.c.ListWorkflows(ctx, t.org, t.ws, t.rid, page)
			if err != nil {
				return err
			}
			return printList(a, l, workflowColumns)
		},
	}
	pageFlags(cmd, &page)
	return cmd
}

func (a *app) workflowShowCmd(sc *scope) *cobra.Command {
	var runID string
	var runs bool
	cmd := &cobra.Command{
		Use:   "show RUNTIME WORKFLOW",
		Short: "Show a workflow and its last run's steps (or a run's, or its runs)",
		Long:  "Show a workflow, its schedule and the steps of its last run (--run: of that run; --runs: list its runs). " + workflowArg,
		Args:  exactArgs("RUNTIME", "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			if runs {
				l, err := t.c.ListWorkflowRuns(ctx, t.org, t.ws, t.rid, args[1], client.ListOptions{})
				if err != nil {
					return err
				}
				return printList(a, l, workflowRunColumns)
			}
			wf, err := t.c.GetWorkflow(ctx, t.org, t.ws, t.rid, args[1])
			if err != nil {
				return err
			}
			if runID != "" {
				run, err := t.c.GetWorkflowRun(ctx, t.org, t.ws, t.rid, wf.ID, runID)
				if err != nil {
					return err
				}
				wf.LastRun = &run
			}
			return a.printWorkflow(wf)
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "show this run instead of the last")
	cmd.Flags().BoolVar(&runs, "runs", false, "list the workflow's runs, newest first")
	return cmd
}

var workflowRunColumns = []column[client.WorkflowRun]{
	{"RUN", func(r client.WorkflowRun) string { return r.ID }},
	{"STATUS", func(r client.WorkflowRun) string { return r.Status }},
	{"ERROR", func(r client.WorkflowRun) string { return r.Error }},
	{"CREATED", func(r client.WorkflowRun) string { return ts(r.CreatedAt) }},
	{"FINISHED", func(r client.WorkflowRun) string { return tsp(r.FinishedAt) }},
}

// printWorkflow prints wf and the steps of its last run.
func (a *app) printWorkflow(wf client.Workflow) error {
	fields := []field{{"ID", wf.ID}, {"NAME", wf.Name}, {"RUNTIME", wf.RuntimeID}, {"SCHEDULE", wf.Schedule},
		{"NEXT_RUN", tsp(wf.NextRunAt)}, {"CREATED", ts(wf.CreatedAt)}}
	if r := wf.LastRun; r != nil {
		fields = append(fields, field{"RUN", r.ID}, field{"STATUS", r.Status}, field{"ERROR", r.Error},
			field{"STARTED", tsp(r.StartedAt)}, field{"FINISHED", tsp(r.FinishedAt)})
	}
	if err := a.printObject(wf, fields); err != nil || a.output == outputJSON || wf.LastRun == nil {
		return err
	}
	fmt.Fprintln(a.env.Stdout)
	return printList(a, client.List[client.WorkflowStepState]{Items: wf.LastRun.Steps}, workflowStepColumns)
}

func (a *app) workflowFollowCmd(sc *scope) *cobra.Command {
	var runID string
	cmd := &cobra.Command{
		Use:   "follow RUNTIME WORKFLOW",
		Short: "Follow a workflow's run live until it ends",
		Long: `Follow the workflow's last run (or --run) live: one line per step as it
starts and ends, with its exit code and output, then the run's end. Exits 1
unless the run succeeded. ` + workflowArg,
		Args: exactArgs("RUNTIME", "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			return a.followRun(ctx, t, args[1], runID)
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "follow this run instead of the last")
	return cmd
}

// followRun prints a run's events as they come (JSON lines with -o
// json) and fails unless it succeeded.
func (a *app) followRun(ctx context.Context, t target, workflow, runID string) error {
	st, err := t.c.FollowWorkflow(ctx, t.org, t.ws, t.rid, workflow, runID)
	if err != nil {
		return err
	}
	defer st.Close()
	w := a.env.Stdout
	status := ""
	for {
		ev, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		status = ev.Status
		switch {
		case a.output == outputJSON:
			b, _ := json.Marshal(ev)
			fmt.Fprintln(w, string(b))
		case ev.Step != nil:
			s := ev.Step
			line := strings.TrimSpace(fmt.Sprintf("step %s %s %s", s.Name, s.Status, exitNote(s)))
			if out := oneLine(stepOutput(*s), 100); out != "" && s.Status != client.StepRunning {
				line += ": " + out
			}
			fmt.Fprintln(w, line)
		default:
			fmt.Fprintf(w, "run %s\n", ev.Status)
		}
	}
	if status != client.WorkflowSucceeded {
		return exitCode(ExitError)
	}
	return nil
}

func exitNote(s *client.WorkflowStepState) string {
	if s.ExitCode == nil {
		return ""
	}
	return "(exit " + strconv.Itoa(*s.ExitCode) + ")"
}

func (a *app) workflowCancelCmd(sc *scope) *cobra.Command {
	var runID string
	cmd := &cobra.Command{
		Use:   "cancel RUNTIME WORKFLOW",
		Short: "Cancel a workflow's run in progress (the last, or --run)",
		Long:  "Cancel the workflow's last run (or --run): its running step is stopped, the steps after it skipped; its schedule is kept. " + workflowArg,
		Args:  exactArgs("RUNTIME", "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			run, err := t.c.CancelWorkflow(ctx, t.org, t.ws, t.rid, args[1], runID)
			if err != nil {
				return err
			}
			return a.printWorkflow(client.Workflow{ID: run.WorkflowID, RuntimeID: t.rid, Name: args[1], LastRun: &run})
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "cancel this run instead of the last")
	return cmd
}

func (a *app) workflowRemoveCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "rm RUNTIME WORKFLOW",
		Aliases: []string{"delete"},
		Short:   "Delete a workflow and its runs (a run in progress is cancelled)",
		Long:    "Delete a workflow, its schedule and its runs. " + workflowArg,
		Args:    exactArgs("RUNTIME", "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			if err := t.c.DeleteWorkflow(ctx, t.org, t.ws, t.rid, args[1]); err != nil {
				return err
			}
			fmt.Fprintf(a.env.Stdout, "deleted workflow %s\n", args[1])
			return nil
		},
	}
}
