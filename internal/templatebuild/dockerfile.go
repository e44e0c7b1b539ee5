package templatebuild

import (
	"bufio"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// CodeInvalidDockerfile refuses a Dockerfile a build would not run as
// paddock builds: one whose bases it cannot tell before it runs (a
// variable in FROM), or that would reach a network (ADD of a URL), or
// that leaves triggers in the image (ONBUILD).
const CodeInvalidDockerfile = "invalid_dockerfile"

// maxDockerfileBytes bounds the Dockerfile read from a build's context.
const maxDockerfileBytes = 1 << 20

// instruction is one instruction of a Dockerfile: its keyword (upper case)
// and its arguments, continuation lines joined.
type instruction struct {
	line int
	cmd  string
	args []string
}

// parseDockerfile splits a Dockerfile into its instructions: comments and
// blank lines dropped, lines ending in '\' joined to the next. A parser
// directive other than the default escape character is refused.
func parseDockerfile(text string) ([]instruction, error) {
	var out []instruction
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), maxDockerfileBytes)
	cur, start, n, header := "", 0, 0, true
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			if header && isDirective(line, "escape") && !strings.HasSuffix(strings.ReplaceAll(line, " ", ""), `=\`) {
				return nil, errdefs.InvalidArgument(CodeInvalidDockerfile, "line %d: only the default escape character '\\' is supported", n)
			}
			continue
		}
		header = false
		if line == "" && cur == "" {
			continue
		}
		if cur == "" {
			start = n
		}
		if body, ok := strings.CutSuffix(line, `\`); ok {
			cur += body + " "
			continue
		}
		cur += line
		fields := strings.Fields(cur)
		cur = ""
		if len(fields) > 0 {
			out = append(out, instruction{line: start, cmd: strings.ToUpper(fields[0]), args: fields[1:]})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, errdefs.InvalidArgument(CodeInvalidDockerfile, "the Dockerfile cannot be read: %v", err)
	}
	if len(out) == 0 {
		return nil, errdefs.InvalidArgument(CodeInvalidDockerfile, "the Dockerfile has no instruction")
	}
	return out, nil
}

// isDirective reports whether comment line is the parser directive name.
func isDirective(line, name string) bool {
	k, _, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), "=")
	return ok && strings.EqualFold(strings.TrimSpace(k), name)
}

// baseImages are the images a Dockerfile builds from: each FROM's image
// that is not an earlier stage, and each COPY --from naming an image. It
// refuses what paddock does not build (see CodeInvalidDockerfile).
func baseImages(ins []instruction) ([]string, error) {
	stages := map[string]bool{}
	var bases []string
	add := func(img string) {
		for _, b := range bases {
			if b == img {
				return
			}
		}
		bases = append(bases, img)
	}
	for i, in := range ins {
		if i == 0 && in.cmd != "FROM" && in.cmd != "ARG" {
			return nil, errdefs.InvalidArgument(CodeInvalidDockerfile, "line %d: a Dockerfile begins with FROM", in.line)
		}
		switch in.cmd {
		case "FROM":
			img, stage, err := fromArgs(in)
			if err != nil {
				return nil, err
			}
			if !stages[strings.ToLower(img)] {
				add(img)
			}
			if stage != "" {
				stages[strings.ToLower(stage)] = true
			}
		case "COPY", "ADD":
			img, err := copyArgs(in, stages)
			if err != nil {
				return nil, err
			}
			if img != "" {
				add(img)
			}
		case "ONBUILD":
			return nil, errdefs.InvalidArgument(CodeInvalidDockerfile, "line %d: ONBUILD is not supported (an image built here leaves no triggers)", in.line)
		}
	}
	return bases, nil
}

// fromArgs reads FROM [--platform=…] IMAGE [AS NAME].
func fromArgs(in instruction) (image, stage string, err error) {
	args := in.args
	for len(args) > 0 && strings.HasPrefix(args[0], "--") {
		args = args[1:]
	}
	switch {
	case len(args) == 1:
	case len(args) == 3 && strings.EqualFold(args[1], "AS"):
		stage = args[2]
	default:
		return "", "", errdefs.InvalidArgument(CodeInvalidDockerfile, "line %d: FROM takes an image and, optionally, AS NAME", in.line)
	}
	if strings.ContainsAny(args[0], "$") {
		return "", "", errdefs.InvalidArgument(CodeInvalidDockerfile, "line %d: FROM names its image without variables (the base is checked before the build runs)", in.line)
	}
	return args[0], stage, nil
}

// copyArgs refuses an ADD of a URL or a git repository, and returns the
// image a COPY --from names when it is not a stage (by name or index).
func copyArgs(in instruction, stages map[string]bool) (string, error) {
	from := ""
	for _, a := range in.args {
		if v, ok := strings.CutPrefix(a, "--from="); ok {
			from = v
		}
		if in.cmd == "ADD" && (strings.Contains(a, "://") || strings.HasPrefix(a, "git@")) {
			return "", errdefs.InvalidArgument(CodeInvalidDockerfile, "line %d: ADD of a URL is not supported (a build has no network); put the file in the context", in.line)
		}
	}
	if from == "" || stages[strings.ToLower(from)] {
		return "", nil
	}
	if _, err := strconv.Atoi(from); err == nil {
		return "", nil
	}
	if strings.Contains(from, "$") {
		return "", errdefs.InvalidArgument(CodeInvalidDockerfile, "line %d: --from names its image or stage without variables", in.line)
	}
	return from, nil
}
