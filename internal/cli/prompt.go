package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

// maxPrompt bounds a prompt read from standard input: the server takes
// request bodies of at most 1 MiB.
const maxPrompt = 1 << 20

// turnOptions are the flags prompt and task share.
type turnOptions struct {
	session, harness, model string
	timeout                 time.Duration
	ndjson                  bool
}

func (o *turnOptions) register(cmd *cobra.Command, prompt bool) {
	f := cmd.Flags()
	if prompt {
		f.StringVar(&o.session, "session", "", "continue this session (default: start one)")
	}
	f.StringVar(&o.harness, "harness", "", "agent harness to run (see 'paddock capabilities -o json'; default: the session's, or the server's)")
	f.StringVar(&o.model, "model", "", "model for the harness to use (default: the harness's)")
	f.DurationVar(&o.timeout, "timeout", 0, "stop the turn after this long, e.g. 10m (default: the server's)")
	f.BoolVar(&o.ndjson, "json", false, "print the events as they come, one JSON object a line")
}

func (a *app) promptCmd() *cobra.Command {
	var sc scope
	return a.turnCmd(client.SessionPrompt, &sc)
}

func (a *app) taskCmd() *cobra.Command {
	var sc scope
	cmd := a.turnCmd(client.SessionTask, &sc)
	// The evaluation runs: paddock task run|ls|show|cancel (task.go).
	cmd.AddCommand(a.taskRunCmd(&sc), a.taskListCmd(&sc), a.taskShowCmd(&sc), a.taskCancelCmd(&sc))
	return cmd
}

// turnCmd is `prompt` or `task`.
func (a *app) turnCmd(kind string, sc *scope) *cobra.Command {
	var opts turnOptions
	cmd := &cobra.Command{
		Use:   "prompt RUNTIME [PROMPT|-]",
		Short: "Prompt the agent harness in a runtime's sandbox",
		Long: `Run one turn of an agent harness (Claude Code, Codex, OpenCode, …) in a
runtime's sandbox and print what it does as it does it: the assistant's text,
→ each tool call and ← its result, then the tokens used and the session to
continue with --session. PROMPT "-", or none with piped standard input, reads
the prompt from standard input. --json prints the events themselves, one JSON
object a line; -o json waits for the turn and prints its result. paddock exits
1 when the turn failed. A paused runtime is woken first. ` + runtimeArg,
		Example: `  paddock prompt agent "list the failing tests"
  paddock prompt agent --session 0f3e… "now fix them"
  git diff | paddock prompt agent - --harness codex`,
		Args: rangeArgs(1, 2, "RUNTIME [PROMPT|-]"),
	}
	if kind == client.SessionTask {
		cmd.Use = "task RUNTIME [PROMPT|-]"
		cmd.Short = "Run a task to completion with the agent harness in a runtime's sandbox"
		cmd.Long = `Run a prompt to completion as a task, in a session of its own, with an agent
harness in a runtime's sandbox. Output and flags are those of 'paddock
prompt', without --session. ` + runtimeArg
		cmd.Example = `  paddock task agent "upgrade the dependencies and make the tests pass"
  paddock task agent - --json < task.md > events.ndjson`
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		text, err := a.promptText(args[1:])
		if err != nil {
			return err
		}
		secs, err := durationSeconds("timeout", opts.timeout, true)
		if err != nil {
			return err
		}
		req := client.PromptRequest{Prompt: text, Harness: opts.harness, SessionID: opts.session, Model: opts.model, TimeoutSeconds: secs}
		ctx := cmd.Context()
		t, err := a.target(ctx, sc, args[0])
		if err != nil {
			return err
		}
		if a.output == outputJSON && !opts.ndjson {
			return a.turnCollected(ctx, t, kind, req)
		}
		return a.turnStreamed(ctx, t, kind, req, opts.ndjson)
	}
	scopeFlags(cmd, sc, true)
	opts.register(cmd, kind == client.SessionPrompt)
	return cmd
}

// promptText is the PROMPT argument, or standard input for "-" or none
// when it is not a terminal.
func (a *app) promptText(args []string) (string, error) {
	if len(args) == 1 && args[0] != "-" {
		if strings.TrimSpace(args[0]) == "" {
			return "", usagef("the prompt is empty")
		}
		return args[0], nil
	}
	if len(args) == 0 {
		if _, tty := ttyOf(a.env.Stdin); tty {
			return "", usagef("expected a PROMPT, or - to read it from standard input")
		}
	}
	b, err := io.ReadAll(io.LimitReader(a.env.Stdin, maxPrompt+1))
	if err != nil {
		return "", fmt.Errorf("read the prompt: %w", err)
	}
	if len(b) > maxPrompt {
		return "", usagef("the prompt on standard input is larger than %d bytes", maxPrompt)
	}
	text := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(text) == "" {
		return "", usagef("the prompt on standard input is empty")
	}
	return text, nil
}

// errTurnFailed ends a command whose turn failed, once it said why.
var errTurnFailed = exitCode(ExitError)

// turnCollected runs the turn to its end and prints its result as JSON.
func (a *app) turnCollected(ctx context.Context, t target, kind string, req client.PromptRequest) error {
	run := t.c.Prompt
	if kind == client.SessionTask {
		run = t.c.Task
	}
	res, err := run(ctx, t.org, t.ws, t.rid, req)
	if err != nil {
		return err
	}
	if err := a.printJSON(res); err != nil {
		return err
	}
	if res.Error != "" || res.Session.Status == client.SessionFailed {
		return errTurnFailed
	}
	return nil
}

// turnStreamed prints the turn's events as they come: rendered for
// people, or as NDJSON.
func (a *app) turnStreamed(ctx context.Context, t target, kind string, req client.PromptRequest, ndjson bool) error {
	run := t.c.PromptStream
	if kind == client.SessionTask {
		run = t.c.TaskStream
	}
	st, err := run(ctx, t.org, t.ws, t.rid, req)
	if err != nil {
		return err
	}
	defer st.Close()
	p := &eventPrinter{out: a.env.Stdout, errOut: a.env.Stderr}
	enc := json.NewEncoder(a.env.Stdout)
	enc.SetEscapeHTML(false)
	var streamErr error
	for {
		ev, err := st.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				streamErr = err
			}
			break
		}
		switch {
		case ndjson:
			if err := enc.Encode(ev); err != nil {
				return err
			}
		case ev.Type == client.SessionEventMessage && ev.Role == "user":
			// the prompt just given
		default:
			p.print(ev)
		}
	}
	p.endLine()
	if sid := cmp.Or(st.SessionID, req.SessionID); sid != "" && !ndjson {
		if kind == client.SessionPrompt {
			fmt.Fprintf(a.env.Stderr, "session %s (continue with --session %s)\n", sid, sid)
		} else {
			fmt.Fprintf(a.env.Stderr, "session %s\n", sid)
		}
	}
	switch {
	case streamErr != nil && p.sawError && client.Code(streamErr) != "":
		return errTurnFailed // the error event said why
	case errors.Is(streamErr, io.ErrUnexpectedEOF):
		return fmt.Errorf("the event stream ended before the turn did: %w", streamErr)
	case streamErr != nil:
		return streamErr
	case st.Failed():
		if d, _ := st.Done(); !p.sawError && !ndjson {
			fmt.Fprintf(a.env.Stderr, "paddock: the turn failed (the harness exited %d)\n", d.ExitCode)
		}
		return errTurnFailed
	}
	return nil
}

// eventPrinter renders session events for people: messages as text, tool
// calls and results on a line each, usage and errors.
type eventPrinter struct {
	out, errOut io.Writer
	// midLine: the last text printed did not end its line.
	midLine bool
	// sawError: an error event was printed.
	sawError bool
}

// maxToolLine bounds how much of a tool call's input or result is shown.
const maxToolLine = 160

func (p *eventPrinter) endLine() {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
}

func (p *eventPrinter) line(format string, args ...any) {
	p.endLine()
	fmt.Fprintf(p.out, format+"\n", args...)
}

func (p *eventPrinter) print(ev client.SessionEvent) {
	switch ev.Type {
	case client.SessionEventMessage:
		if ev.Role == "user" {
			p.line("> %s", oneLine(ev.Text, 0))
			return
		}
		if ev.Text == "" {
			return
		}
		if p.midLine {
			fmt.Fprintln(p.out)
		}
		fmt.Fprint(p.out, ev.Text)
		p.midLine = !strings.HasSuffix(ev.Text, "\n")
	case client.SessionEventToolCall:
		if ev.Tool == nil {
			return
		}
		input := ""
		if len(ev.Tool.Input) > 0 {
			var b bytes.Buffer
			if json.Compact(&b, ev.Tool.Input) == nil {
				input = " " + oneLine(b.String(), maxToolLine)
			}
		}
		p.line("→ %s%s", ev.Tool.Name, input)
	case client.SessionEventToolResult:
		if ev.Result == nil {
			return
		}
		if ev.Result.IsError {
			p.line("← error: %s", oneLine(ev.Result.Output, maxToolLine))
		} else {
			p.line("← %s", oneLine(ev.Result.Output, maxToolLine))
		}
	case client.SessionEventUsage:
		if ev.Usage != nil {
			p.line("%s", usageLine(*ev.Usage))
		}
	case client.SessionEventError:
		p.endLine()
		p.sawError = true
		msg, code := "the turn failed", ""
		if ev.Error != nil {
			msg, code = cmp.Or(ev.Error.Message, msg), ev.Error.Code
		}
		if code != "" {
			msg += " (" + code + ")"
		}
		fmt.Fprintf(p.errOut, "error: %s\n", msg)
	}
}

// usageLine is "usage: 1200 input, 300 output, 1000 cache read tokens,
// $0.0123".
func usageLine(u client.TurnUsage) string {
	s := fmt.Sprintf("usage: %d input, %d output", u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens != 0 {
		s += fmt.Sprintf(", %d cache read", u.CacheReadTokens)
	}
	s += " tokens"
	if u.CostUSD != 0 {
		s += ", $" + strconv.FormatFloat(u.CostUSD, 'f', 4, 64)
	}
	return s
}

// oneLine squeezes s onto one line, its runs of white space made one
// space, cut to max runes (0: no bound) with an ellipsis.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if max > 0 && utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max-1]) + "…"
	}
	return s
}
