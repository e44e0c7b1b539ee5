package capability

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"
)

// semverRE is the regular expression semver.org gives for SemVer 2.0.0.
var semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// semver is a parsed version; build metadata is dropped, it has no part in
// precedence.
type semver struct {
	major, minor, patch uint64
	pre                 []string
}

func parseSemver(s string) (semver, bool) {
	m := semverRE.FindStringSubmatch(s)
	if m == nil {
		return semver{}, false
	}
	var v semver
	var err error
	if v.major, err = strconv.ParseUint(m[1], 10, 64); err != nil {
		return semver{}, false
	}
	if v.minor, err = strconv.ParseUint(m[2], 10, 64); err != nil {
		return semver{}, false
	}
	if v.patch, err = strconv.ParseUint(m[3], 10, 64); err != nil {
		return semver{}, false
	}
	if m[4] != "" {
		v.pre = strings.Split(m[4], ".")
	}
	return v, true
}

// ValidVersion reports whether s is a SemVer 2.0.0 version (pre-release
// and build metadata allowed).
func ValidVersion(s string) bool {
	_, ok := parseSemver(s)
	return ok
}

// CompareVersions orders two versions by SemVer precedence: -1 when a
// comes before b, 0 when they have the same precedence (build metadata is
// ignored), +1 after. A version that is not SemVer sorts before every
// valid one, and two invalid ones compare as strings, so sorting is total.
func CompareVersions(a, b string) int {
	va, okA := parseSemver(a)
	vb, okB := parseSemver(b)
	switch {
	case !okA && !okB:
		return strings.Compare(a, b)
	case !okA:
		return -1
	case !okB:
		return 1
	}
	if c := cmp.Compare(va.major, vb.major); c != 0 {
		return c
	}
	if c := cmp.Compare(va.minor, vb.minor); c != 0 {
		return c
	}
	if c := cmp.Compare(va.patch, vb.patch); c != 0 {
		return c
	}
	// A release comes after its pre-releases.
	switch {
	case len(va.pre) == 0 && len(vb.pre) == 0:
		return 0
	case len(va.pre) == 0:
		return 1
	case len(vb.pre) == 0:
		return -1
	}
	for i := 0; i < len(va.pre) && i < len(vb.pre); i++ {
		if c := comparePre(va.pre[i], vb.pre[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(va.pre), len(vb.pre))
}

// comparePre compares pre-release identifiers: numeric ones numerically
// and before alphanumeric ones, which compare in ASCII order.
func comparePre(a, b string) int {
	na, errA := strconv.ParseUint(a, 10, 64)
	nb, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(na, nb)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func isPrerelease(version string) bool {
	v, ok := parseSemver(version)
	return ok && len(v.pre) > 0
}

var (
	capabilityNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	itemNameRE       = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,62}$`)
	envNameRE        = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// reservedNames are the directories Materialize writes beside the bundles
// under Root; a capability cannot take one of them.
var reservedNames = map[string]bool{"bin": true, "codex": true, "gemini": true}

// ValidName reports whether s is a capability name: lower-case letters,
// digits and dashes, starting with a letter or digit, at most 63
// characters, and not one of the names Materialize keeps for itself under
// Root (bin, codex, gemini).
func ValidName(s string) bool {
	return capabilityNameRE.MatchString(s) && !reservedNames[s]
}

// validItemName is the rule for the names of agents, skills, tools, MCP
// servers, workers, scripts and flags.
func validItemName(s string) bool {
	return itemNameRE.MatchString(s)
}
