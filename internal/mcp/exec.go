package mcp

import (
	"context"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/pkg/client"
)

// Bounds of exec.
const (
	defaultExecTimeout = 300       // seconds
	maxExecTimeout     = 24 * 3600 // seconds
	defaultExecOutput  = 64 << 10
	maxExecOutput      = 1 << 20
)

// ExecInput runs a command in a runtime.
type ExecInput struct {
	Target
	Command        string            `json:"command,omitempty" jsonschema:"a shell command line, run by sh -c; give this or argv"`
	Argv           []string          `json:"argv,omitempty" jsonschema:"the program and its arguments, run without a shell; give this or command"`
	Cwd            string            `json:"cwd,omitempty" jsonschema:"the working directory, an absolute path; default: the user's home"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"environment variables added to the sandbox's"`
	User           string            `json:"user,omitempty" jsonschema:"user or root; default: the runtime's user"`
	Stdin          string            `json:"stdin,omitempty" jsonschema:"text written to the command's standard input, which is then closed"`
	TimeoutSeconds int64             `json:"timeout_seconds,omitempty" jsonschema:"kill the command after this many seconds; default 300, at most 86400"`
	MaxOutputBytes int64             `json:"max_output_bytes,omitempty" jsonschema:"bytes kept of each of stdout and stderr; default 65536, at most 1048576"`
}

// ExecOutput is how a command ended and what it printed.
type ExecOutput struct {
	ExitCode        int    `json:"exit_code" jsonschema:"the command's exit code; -1 when a signal ended it"`
	Signal          string `json:"signal,omitempty" jsonschema:"the signal that ended it, e.g. SIGKILL"`
	TimedOut        bool   `json:"timed_out" jsonschema:"it was killed at timeout_seconds"`
	OOMKilled       bool   `json:"oom_killed,omitempty" jsonschema:"the kernel killed it when the sandbox ran out of memory"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutTruncated bool   `json:"stdout_truncated" jsonschema:"stdout was longer than max_output_bytes and was cut"`
	StderrTruncated bool   `json:"stderr_truncated" jsonschema:"stderr was longer than max_output_bytes and was cut"`
}

// addSandboxTools adds the tools that work inside a runtime's sandbox.
func (t *tools) addSandboxTools(s *sdk.Server) {
	add(s, "exec", "Run a command",
		"Run a command in a runtime's sandbox and wait for it: a shell command line (command) or an argv, with cwd, env, user and a timeout. "+
			"Returns the exit code, stdout and stderr (each cut at max_output_bytes, with a truncated flag). A non-zero exit is a result, not an error. Wakes a paused runtime.",
		openWorld, t.exec)
	add(s, "read_file", "Read a file",
		"Read a file of a runtime's sandbox, as UTF-8 text or base64, from an offset and up to a length.",
		readOnly, t.readFile)
	add(s, "write_file", "Write a file",
		"Write a file of a runtime's sandbox, whole (it changes all at once), from text or base64; missing parent directories are made.",
		idempotent, t.writeFile)
	add(s, "list_files", "List files",
		"List a directory of a runtime's sandbox, or a tree of it (recursive, max_depth).",
		readOnly, t.listFiles)
	add(s, "preview_url", "Open a preview URL",
		"The URL of a TCP port of a runtime's sandbox, through paddock: a public port's as it is, a private port's carrying a new preview token (valid for ttl).",
		additive, t.previewURL)
	add(s, "prompt", "Prompt an agent in a runtime",
		"Run one turn of an agent harness (Claude Code, Codex, ...) in a runtime and return its final answer and the session id; pass session_id to continue that conversation.",
		openWorld, t.prompt)
}

func (t *tools) exec(ctx context.Context, in ExecInput) (ExecOutput, error) {
	req, err := execRequest(in)
	if err != nil {
		return ExecOutput{}, err
	}
	org, ws, id, err := t.runtime(ctx, in.Target)
	if err != nil {
		return ExecOutput{}, err
	}
	res, err := t.c.Exec(ctx, org, ws, id, req)
	if err != nil {
		return ExecOutput{}, err
	}
	out := ExecOutput{Stdout: text(res.Stdout), Stderr: text(res.Stderr)}
	if st := res.Exit; st != nil {
		out.ExitCode, out.Signal, out.TimedOut, out.OOMKilled = st.Code, st.Signal, st.TimedOut, st.OOMKilled
		out.StdoutTruncated = st.StdoutBytes > int64(len(res.Stdout))
		out.StderrTruncated = st.StderrBytes > int64(len(res.Stderr))
	}
	return out, nil
}

// execRequest is the API's request for in, its bounds and defaults
// applied.
func execRequest(in ExecInput) (client.ExecRequest, error) {
	req := client.ExecRequest{Argv: in.Argv, Cwd: in.Cwd, Env: in.Env, User: in.User,
		TimeoutMS: in.TimeoutSeconds * 1000, MaxOutputBytes: in.MaxOutputBytes}
	switch {
	case in.Command != "" && len(in.Argv) > 0:
		return req, errorf("invalid_command", "give command or argv, not both")
	case in.Command != "":
		req.Argv = []string{"sh", "-c", in.Command}
	case len(in.Argv) == 0:
		return req, errorf("invalid_command", "give a command (a shell command line) or argv")
	}
	switch {
	case in.TimeoutSeconds < 0 || in.TimeoutSeconds > maxExecTimeout:
		return req, errorf("invalid_timeout", "timeout_seconds must be between 1 and %d", maxExecTimeout)
	case in.TimeoutSeconds == 0:
		req.TimeoutMS = defaultExecTimeout * 1000
	}
	switch {
	case in.MaxOutputBytes < 0 || in.MaxOutputBytes > maxExecOutput:
		return req, errorf("invalid_max_output", "max_output_bytes must be between 1 and %d", maxExecOutput)
	case in.MaxOutputBytes == 0:
		req.MaxOutputBytes = defaultExecOutput
	}
	if in.Stdin != "" {
		req.Stdin = []byte(in.Stdin)
	}
	return req, nil
}

// text is output as text: bytes that are not UTF-8 become U+FFFD.
func text(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }
