package shim

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// SudoUsage is what `sudo -h` prints.
const SudoUsage = `usage: sudo [-EHnS] [-u user] [-i | -s] [--] [command [arg ...]]

paddock's sudo: the sandbox's agent runs the command as user (root when
not given), with this process's standard streams.

  -u, --user=USER        run as USER: root, user, #0 or #1000
  -E, --preserve-env     keep the whole environment
  -i, --login            run the target user's login shell (with the command)
  -s, --shell            run a shell (with the command)
  -H, -n, -S, -k, -v     accepted; no password is ever asked`

// sudoSecurePath is the PATH a command gets unless -E keeps the caller's,
// as Debian's sudoers sets secure_path.
const sudoSecurePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// sudoKept are the variables sudo keeps from the caller's environment
// without -E: the terminal's, the locale's, and what the agent injected
// for the egress proxy and its CA (a command run with sudo reaches the
// network as its caller does). markVar keeps the command one of its
// caller's processes, so it ends with it.
var sudoKept = []string{
	"TERM", "COLORTERM", "DISPLAY", "LANG", "LANGUAGE", "TZ", markVar,
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
}

// sudoArgs are sudo's parsed command line.
type sudoArgs struct {
	user          string
	preserve      bool
	login, shell  bool
	noop, version bool
	help          bool
	argv          []string
}

// SudoMain is paddock-shim called as "sudo": it asks the agent to run the
// command and exits as the command did.
func SudoMain(args []string, stderr io.Writer) int {
	a, err := parseSudoArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "sudo: %v\n%s\n", err, SudoUsage)
		return 1
	}
	switch {
	case a.help:
		fmt.Fprintln(stderr, SudoUsage)
		return 0
	case a.version:
		fmt.Fprintln(stderr, "paddock sudo (the sandbox's agent)")
		return 0
	case a.noop && len(a.argv) == 0 && !a.login && !a.shell:
		return 0
	}
	req, err := a.request()
	if err != nil {
		fmt.Fprintf(stderr, "sudo: %v\n", err)
		return 1
	}
	code, err := runSudo(req, os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(stderr, "sudo: %v\n", err)
	}
	return code
}

// parseSudoArgs reads sudo's options up to the command.
func parseSudoArgs(args []string) (sudoArgs, error) {
	var a sudoArgs
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			a.argv = args[i+1:]
			return a, nil
		case strings.HasPrefix(arg, "--"):
			if err := a.long(arg, args, &i); err != nil {
				return a, err
			}
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			if err := a.short(arg[1:], args, &i); err != nil {
				return a, err
			}
		default:
			a.argv = args[i:]
			return a, nil
		}
	}
	return a, nil
}

// long reads one --option.
func (a *sudoArgs) long(arg string, args []string, i *int) error {
	name, value, hasValue := strings.Cut(arg[2:], "=")
	switch name {
	case "user":
		if !hasValue {
			v, err := nextValue(args, i, "--user")
			if err != nil {
				return err
			}
			value = v
		}
		a.user = value
	case "preserve-env":
		a.preserve = true
	case "login":
		a.login = true
	case "shell":
		a.shell = true
	case "non-interactive", "set-home", "stdin", "reset-timestamp", "validate", "remove-timestamp":
		a.noop = true
	case "help":
		a.help = true
	case "version":
		a.version = true
	default:
		return fmt.Errorf("unknown option --%s", name)
	}
	return nil
}

// short reads a cluster of short options (-nE, -uroot, -u root).
func (a *sudoArgs) short(cluster string, args []string, i *int) error {
	for j := 0; j < len(cluster); j++ {
		switch c := cluster[j]; c {
		case 'u':
			v := cluster[j+1:]
			if v == "" {
				var err error
				if v, err = nextValue(args, i, "-u"); err != nil {
					return err
				}
			}
			a.user = v
			return nil
		case 'E':
			a.preserve = true
		case 'i':
			a.login = true
		case 's':
			a.shell = true
		case 'H', 'n', 'S', 'k', 'v', 'K':
			a.noop = true
		case 'h':
			a.help = true
		case 'V':
			a.version = true
		default:
			return fmt.Errorf("unknown option -%c", c)
		}
	}
	return nil
}

// nextValue takes the argument after args[*i] as option's value.
func nextValue(args []string, i *int, option string) (string, error) {
	if *i+1 >= len(args) {
		return "", fmt.Errorf("option %s needs a value", option)
	}
	*i++
	return args[*i], nil
}

// request is what to ask the agent for.
func (a sudoArgs) request() (sudoRequest, error) {
	name := a.user
	switch name {
	case "", "#0":
		name = UserRoot
	case "#1000":
		name = UserDefault
	}
	u, err := lookupUser(name, "")
	if err != nil {
		return sudoRequest{}, fmt.Errorf("unknown user %s", a.user)
	}
	cwd, _ := os.Getwd()
	req := sudoRequest{User: name, Cwd: cwd, Env: sudoEnv(a.preserve, u), Argv: a.argv}
	if a.login || a.shell {
		shell := "/bin/sh"
		if _, err := os.Stat("/bin/bash"); err == nil {
			shell = "/bin/bash"
		}
		req.Argv = []string{shell}
		if a.login {
			req.Argv = append(req.Argv, "-l")
			req.Cwd = u.home
		}
		if len(a.argv) > 0 {
			req.Argv = append(req.Argv, "-c", strings.Join(a.argv, " "))
		}
	}
	if len(req.Argv) == 0 {
		return req, fmt.Errorf("no command given\n%s", SudoUsage)
	}
	return req, nil
}

// sudoEnv is the command's environment: the caller's whole with
// preserve, else sudoKept of it; then the target user's and sudo's own.
func sudoEnv(preserve bool, u sandboxUser) []string {
	kept := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if preserve || slices.Contains(sudoKept, k) || strings.HasPrefix(k, "LC_") {
			kept[k] = v
		}
	}
	if !preserve {
		kept["PATH"] = sudoSecurePath
		kept["HOME"] = u.home
	}
	kept["USER"], kept["LOGNAME"] = u.name, u.name
	kept["SUDO_USER"] = os.Getenv("USER")
	kept["SUDO_UID"], kept["SUDO_GID"] = fmt.Sprint(os.Getuid()), fmt.Sprint(os.Getgid())
	env := make([]string, 0, len(kept))
	for k, v := range kept {
		env = append(env, k+"="+v)
	}
	return env
}

// runSudo sends req with the standard streams given (this process's) to
// the agent, forwards the signals this process gets, and returns the
// command's exit status.
func runSudo(req sudoRequest, stdin, stdout, stderr *os.File) (int, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sudoSocket, Net: "unix"})
	if err != nil {
		return 1, fmt.Errorf("the sandbox's agent does not serve sudo (%v)", err)
	}
	defer c.Close()
	body, err := json.Marshal(req)
	if err != nil {
		return 1, err
	}
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	rights := unix.UnixRights(int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd()))
	if _, _, err := c.WriteMsgUnix(frame, rights, nil); err != nil {
		return 1, fmt.Errorf("send the request: %w", err)
	}
	if _, err := c.Write(body); err != nil {
		return 1, fmt.Errorf("send the request: %w", err)
	}
	dec := json.NewDecoder(c)
	var started sudoMessage
	if err := dec.Decode(&started); err != nil {
		return 1, fmt.Errorf("the agent did not answer: %w", err)
	}
	if started.Error != "" {
		return started.Code, fmt.Errorf("%s", started.Error)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGCONT, syscall.SIGTSTP)
	defer func() {
		signal.Stop(sigs)
		close(sigs) // no signal is delivered after Stop: ends the relay
	}()
	enc := json.NewEncoder(c)
	go func() {
		for s := range sigs {
			_ = enc.Encode(sudoMessage{Signal: int(s.(syscall.Signal))})
		}
	}()
	var exit sudoMessage
	if err := dec.Decode(&exit); err != nil || !exit.Exited {
		return 1, fmt.Errorf("lost the agent before the command ended")
	}
	return exit.Code, nil
}
