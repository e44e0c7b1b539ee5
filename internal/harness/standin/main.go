// Command standin stands in for the agent CLIs paddock runs in a sandbox,
// for tests: no model is reachable from paddock's test machines. One static
// binary behaves as claude, codex, opencode, gemini or kimi, chosen by the
// name it is run as (a symlink or copy per name), and mimics that CLI's
// non-interactive mode closely enough that harness.Command's argv drives it
// unchanged:
//
//   - it takes the flags and subcommands the real CLI takes for that mode,
//     --version ("<real version> (paddock stand-in)") and --help, and
//     rejects an unknown flag the way the real argument parser does;
//   - it needs the credential variables the real CLI reads and fails as the
//     real CLI does without them, naming the variables;
//   - it streams the real output format: the session id where the CLI gives
//     it, an assistant message quoting the prompt, one real tool call (ls -1
//     of the working directory, executed), a final message and usage;
//   - it keeps the conversation under HOME where the real CLI does, so that
//     the CLI's own resume flag continues it: a resumed turn's final message
//     says "previous prompt: <prompt>" and "turn <n>"; an unknown id fails
//     as the real CLI fails;
//   - it reports the MCP servers of the configuration it was given: in
//     Claude's init event, and as "mcp servers: a,b" in the first assistant
//     message for the others;
//   - a prompt containing "[fail]" fails mid-turn (after the tool result)
//     with the CLI's error event and exit code 1;
//   - a prompt containing "[model]" first asks the sandbox's egress proxy
//     (HTTPS_PROXY) for a tunnel to the CLI's model host, closes it at once
//     if it opens, and fails as the real CLI does when it cannot: Claude
//     Code announces ten retries with backoff (minutes) as api_retry lines,
//     OpenCode gives up on a refused tunnel and retries anything else
//     silently, the others retry for half an hour.
//
// Nothing else here talks to a network, and nothing is ever sent to a
// model host. The facts each CLI file mimics are the
// ones documented in internal/harness.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	args := os.Args[1:]
	var code int
	switch name {
	case "claude":
		code = claudeMain(args)
	case "codex":
		code = codexMain(args)
	case "opencode":
		code = openCodeMain(args)
	case "gemini":
		code = geminiMain(args)
	case "kimi":
		code = kimiMain(args)
	default:
		fmt.Fprintf(os.Stderr, "%s: run this stand-in as claude, codex, opencode, gemini or kimi (a symlink of that name)\n", name)
		code = 2
	}
	os.Exit(code)
}
