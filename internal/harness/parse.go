package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// turn is the state every parser shares: the session id, the last
// assistant text, whether an error was reported, and the non-JSON lines
// stdout carried (some CLIs print their fatal error there as plain text).
type turn struct {
	h         *Harness
	sessionID string
	lastText  string
	errored   bool
	noise     []string
}

const (
	maxNoiseLines = 8
	maxErrorText  = 2000
)

func (t *turn) HarnessSessionID() string { return t.sessionID }

// decode unmarshals a JSON object line into v. A line that is not a JSON
// object is kept as noise; a JSON line of an unexpected shape is dropped.
func (t *turn) decode(line []byte, v any) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	if line[0] != '{' {
		t.keepNoise(string(line))
		return false
	}
	return json.Unmarshal(line, v) == nil
}

func (t *turn) keepNoise(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	t.noise = append(t.noise, s)
	if len(t.noise) > maxNoiseLines {
		t.noise = t.noise[len(t.noise)-maxNoiseLines:]
	}
}

func (t *turn) message(text string) []Event {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	t.lastText = text
	return []Event{{Type: EventMessage, Role: "assistant", Text: text}}
}

func toolCall(id, name string, input json.RawMessage) Event {
	if len(input) == 0 || !json.Valid(input) {
		input = nil
	}
	return Event{Type: EventToolCall,
		Tool: &ToolCall{ID: id, Name: name, Input: input}}
}

func toolResult(id, output string, isError bool) Event {
	return Event{Type: EventToolResult,
		Result: &ToolResult{ID: id, Output: output, IsError: isError}}
}

func usage(u TurnUsage) Event {
	return Event{Type: EventUsage, Usage: &u}
}

// fail returns an error event and marks the turn as failed. code is the
// CLI's own error code, if it has one; an error recognized as missing
// credentials or a missing session gets paddock's code instead, and a
// credentials error also names the variables the harness reads.
func (t *turn) fail(code, msg string) []Event {
	t.errored = true
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = t.h.Binary + " failed"
		if code != "" {
			msg += ": " + code
		}
	}
	if len(msg) > maxErrorText {
		msg = msg[:maxErrorText] + "…"
	}
	switch {
	case looksUnauthenticated(code, msg):
		code = CodeUnauthenticated
		if !t.namesSecret(msg) {
			msg += " (" + t.h.secretHint() + ")"
		}
	case looksSessionNotFound(msg):
		code = CodeSessionNotFound
	case code == "":
		code = CodeFailed
	}
	return []Event{{Type: EventError,
		Error: &TurnError{Code: code, Message: msg}}}
}

func (t *turn) namesSecret(msg string) bool {
	for _, s := range t.h.Secrets {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// finish ends the turn: an error event if the process failed silently, then
// done. stderrTail is what the process wrote last on stderr.
func (t *turn) finish(exitCode int, stderrTail string) []Event {
	var out []Event
	if exitCode != 0 && !t.errored {
		out = append(out, t.fail("", t.failureText(exitCode, stderrTail))...)
	}
	return append(out, Event{Type: EventDone,
		Done: &TurnDone{ExitCode: exitCode, HarnessSessionID: t.sessionID, Result: t.lastText}})
}

// failureText is the best account of a silent failure: the plain text the
// CLI printed on stdout and the end of stderr, else the exit code.
func (t *turn) failureText(exitCode int, stderrTail string) string {
	parts := slices.Clone(t.noise)
	if s := lastLines(stderrTail, 6); s != "" {
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%s exited with code %d", t.h.Binary, exitCode)
	}
	return strings.Join(parts, "\n")
}

// ansiRE matches the terminal colour and style sequences some CLIs print
// even when stderr is not a terminal (OpenCode's "Error: ").
var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// lastLines returns the last n non-empty lines of s, without terminal
// escape sequences.
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(ansiRE.ReplaceAllString(s, ""), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The CLIs report errors as text, so telling a credentials problem from
// another failure means reading that text. These patterns cover the
// messages each CLI is known to print (see the harness files); anything else
// stays a plain failure.
var (
	unauthRE = regexp.MustCompile(`(?i)(api[ _-]?key|not logged in|/login|unauthori[sz]ed|unauthenticated|invalid authentication|authentication[ _](failed|error|required)|auth method|no credentials?|credentials? (are |is )?(missing|not found)|\b401\b)`)
	noSessRE = regexp.MustCompile(`(?i)(no conversation found|session not found|invalid session identifier|no previous sessions found|no rollout found|no session found|session "[^"]*" not found)`)
)

func looksUnauthenticated(code, msg string) bool {
	switch code {
	case "authentication_failed", "ProviderAuthError", "FatalAuthenticationError", "provider.auth_error":
		return true
	}
	return unauthRE.MatchString(msg)
}

func looksSessionNotFound(msg string) bool { return noSessRE.MatchString(msg) }

// jsonString decodes raw as a JSON string; anything else gives "".
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
