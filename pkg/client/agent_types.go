package client

import "time"

// This file is the wire format of the operations inside a runtime's
// sandbox: exec, processes, files and terminals. Byte fields ([]byte) are
// base64 in JSON, so output that is not text survives intact.

// ExecRequest starts a process in a running runtime.
type ExecRequest struct {
	// Argv is the command; Argv[0] is looked up in the sandbox's PATH.
	Argv []string `json:"argv"`
	// Env is added to the sandbox's environment, or replaces it with
	// ClearEnv.
	Env      map[string]string `json:"env,omitempty"`
	ClearEnv bool              `json:"clear_env,omitempty"`
	// Cwd is the working directory, an absolute path; empty means the
	// sandbox's home.
	Cwd string `json:"cwd,omitempty"`
	// User is the account to run as: "user" (uid 1000) or "root"; empty
	// means the runtime's (its config's user).
	User string `json:"user,omitempty"`
	// Stdin is written to the process's standard input, which is then
	// closed. For more than the body limit (1 MiB), set OpenStdin and
	// stream it with WriteStdin.
	Stdin []byte `json:"stdin,omitempty"`
	// OpenStdin keeps the process's stdin open for WriteStdin (streamed
	// exec only). Without it or Stdin, stdin is /dev/null.
	OpenStdin bool `json:"open_stdin,omitempty"`
	// TimeoutMS kills the process group once passed; 0 means none.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// Background keeps the process running when the request ends; it can
	// be attached to again by id. A foreground process is killed when its
	// request ends first (the client disconnected).
	Background bool `json:"background,omitempty"`
	// MaxOutputBytes bounds how much of each stream a collected (not
	// streamed) exec returns; 0 means 1 MiB, the most is 16 MiB. Beyond
	// it the output is discarded and Truncated is set.
	MaxOutputBytes int64 `json:"max_output_bytes,omitempty"`
}

// ExitStatus is how a process ended.
type ExitStatus struct {
	// Code is the exit status; -1 when a signal ended the process.
	Code int `json:"code"`
	// Signal names the signal that ended it ("SIGKILL"), if any.
	Signal string `json:"signal,omitempty"`
	// TimedOut says it was killed because its timeout passed.
	TimedOut bool `json:"timed_out,omitempty"`
	// OOMKilled says the sandbox ran out of memory and the kernel killed
	// it (Signal is SIGKILL); the sandbox and its agent go on.
	OOMKilled bool      `json:"oom_killed,omitempty"`
	ExitedAt  time.Time `json:"exited_at"`
	// StdoutBytes and StderrBytes count what each stream produced.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
}

// ExecResult is the answer of a collected exec: the process's output and
// exit. A background process answers at once, with no Exit.
type ExecResult struct {
	ID     string      `json:"id"`
	PID    int         `json:"pid"`
	Exit   *ExitStatus `json:"exit,omitempty"`
	Stdout []byte      `json:"stdout"`
	Stderr []byte      `json:"stderr"`
	// Truncated says output beyond MaxOutputBytes was discarded.
	Truncated bool `json:"truncated"`
}

// Exec event types: one NDJSON line each in a streamed exec or attach.
const (
	EventStarted = "started" // ID and PID
	EventOutput  = "output"  // Stream, Offset, Data
	EventLost    = "lost"    // Stream, Offset, Bytes: output dropped before it could be sent
	EventExit    = "exit"    // Exit; the last event
	EventError   = "error"   // Error; the stream ends without an exit
)

// Output stream names.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// ExecEvent is one line of a streamed exec or attach
// (application/x-ndjson): started first, then output and lost events in
// order, then exit, or error if the stream broke.
type ExecEvent struct {
	Event string `json:"event"`
	// started
	ID  string `json:"id,omitempty"`
	PID int    `json:"pid,omitempty"`
	// output and lost: the stream and the offset in it of the first byte.
	Stream string `json:"stream,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	Data   []byte `json:"data,omitempty"`
	// lost: how many bytes are gone.
	Bytes int64 `json:"bytes,omitempty"`
	// exit
	Exit *ExitStatus `json:"exit,omitempty"`
	// error
	Error *Error `json:"error,omitempty"`
}

// Process is a process the sandbox's agent started.
type Process struct {
	ID         string      `json:"id"`
	PID        int         `json:"pid"`
	Argv       []string    `json:"argv"`
	Cwd        string      `json:"cwd,omitempty"`
	Background bool        `json:"background"`
	PTY        bool        `json:"pty"`
	Running    bool        `json:"running"`
	StartedAt  time.Time   `json:"started_at"`
	Exit       *ExitStatus `json:"exit,omitempty"`
	// StdoutBytes and StderrBytes are the output produced so far: the
	// offsets to attach from to get only what comes next.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
}

// SignalRequest sends a signal to a process: HUP, INT, QUIT, KILL, USR1,
// USR2, TERM, CONT, STOP, TSTP or WINCH (with or without "SIG").
type SignalRequest struct {
	Signal string `json:"signal"`
	// ProcessOnly signals the process alone, not its whole group.
	ProcessOnly bool `json:"process_only,omitempty"`
}

// StdinResult counts the bytes WriteStdin delivered.
type StdinResult struct {
	Bytes int64 `json:"bytes"`
}

// File types.
const (
	FileTypeFile      = "file"
	FileTypeDirectory = "directory"
	FileTypeSymlink   = "symlink"
	FileTypeOther     = "other"
)

// FileInfo describes a file in a sandbox.
type FileInfo struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
	// Mode is the permission bits, 0 to 07777 (setuid, setgid, sticky
	// included).
	Mode          uint32    `json:"mode"`
	ModifiedAt    time.Time `json:"modified_at"`
	SymlinkTarget string    `json:"symlink_target,omitempty"`
	UID           uint32    `json:"uid"`
	GID           uint32    `json:"gid"`
}

// IsDir reports whether the file is a directory.
func (f FileInfo) IsDir() bool { return f.Type == FileTypeDirectory }

// FileList is a directory listing. Truncated says more entries existed
// than were returned.
type FileList struct {
	Items     []FileInfo `json:"items"`
	Truncated bool       `json:"truncated"`
}

// RenameRequest moves a file or directory inside the sandbox.
type RenameRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
	// NoOverwrite fails with code "file_exists" instead of replacing an
	// existing target.
	NoOverwrite bool `json:"no_overwrite,omitempty"`
}

// MkdirRequest creates a directory.
type MkdirRequest struct {
	Path string `json:"path"`
	// Mode is the permission bits; 0 means 0755.
	Mode uint32 `json:"mode,omitempty"`
	// Parents creates missing parents and accepts an existing directory
	// (mkdir -p).
	Parents bool `json:"parents,omitempty"`
}

// TarResult counts what a tar upload extracted.
type TarResult struct {
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// Terminal control message types. Binary WebSocket messages carry the
// terminal's bytes both ways; text messages carry one TerminalMessage.
const (
	TerminalStarted = "started" // server → client: ID and PID
	TerminalResize  = "resize"  // client → server: Rows and Cols
	TerminalSignal  = "signal"  // client → server: Signal
	TerminalExit    = "exit"    // server → client: Exit; the session ends
	TerminalError   = "error"   // server → client: Error; a refused control message (the session goes on) or a failure (the session closes)
)

// TerminalMessage is a control message of a terminal session.
type TerminalMessage struct {
	Type   string      `json:"type"`
	ID     string      `json:"id,omitempty"`
	PID    int         `json:"pid,omitempty"`
	Rows   int         `json:"rows,omitempty"`
	Cols   int         `json:"cols,omitempty"`
	Signal string      `json:"signal,omitempty"`
	Exit   *ExitStatus `json:"exit,omitempty"`
	Error  *Error      `json:"error,omitempty"`
}
