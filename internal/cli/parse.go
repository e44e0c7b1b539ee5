package cli

import (
	"math"
	"regexp"
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
