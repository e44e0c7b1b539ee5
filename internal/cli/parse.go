package cli

import (
	"github.com/spf13/cobra"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parseCPU reads a CPU amount as milli-CPUs: "2" and "0.5" are CPUs,
// "500m" is milli-CPUs.
func parseCPU(s string) (int64, error) {
	in := strings.TrimSpace(s)
	if m, ok := strings.CutSuffix(in, "m"); ok {
		n, err := strconv.ParseInt(m, 10, 64)
		if err != nil || n <= 0 {
			return 0, usagef("--cpu %q: want a number of CPUs (0.5, 2) or of milli-CPUs (500m)", s)
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(in, 64)
	if err != nil || !(f > 0 && f <= 1e6) {
		return 0, usagef("--cpu %q: want a number of CPUs (0.5, 2) or of milli-CPUs (500m)", s)
	}
	n := int64(math.Round(f * 1000))
	if n <= 0 {
		return 0, usagef("--cpu %q is less than one milli-CPU", s)
	}
	return n, nil
}

var memRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)$`)

// parseMemory reads a memory amount as megabytes (MiB): a bare number is
// megabytes; M, Mi, MB, MiB and G, Gi, GB, GiB are accepted units.
func parseMemory(s string) (int64, error) { return parseSize("--memory", s) }

// parseSize reads a size in megabytes for flag: 512, 512M or 2G.
func parseSize(flag, s string) (int64, error) {
	bad := usagef("%s %q: want megabytes (512) or an amount with a unit (512M, 2G)", flag, s)
	m := memRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, bad
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil || !(f <= 1<<40) {
		return 0, bad
	}
	switch strings.ToLower(m[2]) {
	case "", "m", "mi", "mb", "mib":
	case "g", "gi", "gb", "gib":
		f *= 1024
	default:
		return 0, bad
	}
	n := int64(math.Round(f))
	if n <= 0 {
		return 0, usagef("%s %q is less than one megabyte", flag, s)
	}
	return n, nil
}

// durationSeconds reads a duration flag as whole seconds, rounding up.
// Zero is allowed when zeroOK.
func durationSeconds(flag string, d time.Duration, zeroOK bool) (int64, error) {
	if d < 0 || (d == 0 && !zeroOK) {
		return 0, usagef("--%s must be a positive duration such as 90s or 15m, not %s", flag, d)
	}
	return int64((d + time.Second - 1) / time.Second), nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidRE.MatchString(s) }

// commandLine parses the arguments of a command that runs a command in a
// sandbox (exec, shell): paddock's flags, one RUNTIME, then the command.
// With a "--", paddock's flags may stand anywhere before it, around
// RUNTIME, and everything after it is the command. Without one, flags stop
// at RUNTIME and everything after RUNTIME is the command, as with docker
// exec. The command must set DisableFlagParsing. help reports --help.
func (a *app) commandLine(cmd *cobra.Command, raw []string) (runtime string, argv []string, help bool, err error) {
	before, after, dash := raw, []string(nil), false
	if i := slices.Index(raw, "--"); i >= 0 {
		before, after, dash = raw[:i], raw[i+1:], true
	}
	cmd.Flags().SetInterspersed(dash)
	// cobra's ParseFlags does nothing while DisableFlagParsing is set.
	cmd.DisableFlagParsing = false
	err = cmd.ParseFlags(before)
	cmd.DisableFlagParsing = true
	if err != nil {
		return "", nil, false, &usageError{msg: err.Error()}
	}
	if h, _ := cmd.Flags().GetBool("help"); h {
		return "", nil, true, nil
	}
	if err := a.checkOutput(); err != nil {
		return "", nil, false, err
	}
	pos := cmd.Flags().Args()
	if len(pos) == 0 {
		return "", nil, false, usagef("expected RUNTIME")
	}
	if dash {
		if len(pos) > 1 {
			return "", nil, false, usagef("expected one RUNTIME before --, got %q", pos)
		}
		return pos[0], after, false, nil
	}
	return pos[0], pos[1:], false, nil
}

var daysRE = regexp.MustCompile(`^([0-9]+)d(.*)$`)

// parseDays is time.ParseDuration with a number of days allowed in front:
// 30d, 1d12h, 720h.
func parseDays(s string) (time.Duration, bool) {
	var days time.Duration
	if m := daysRE.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 100000 {
			return 0, false
		}
		days, s = time.Duration(n)*24*time.Hour, m[2]
		if s == "" {
			return days, true
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, false
	}
	return days + d, true
}
