package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"strconv"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

var _ provider.ImageBuilder = (*Provider)(nil)

// Codes of a build.
const (
	// CodeBuildStepFailed: a step of the Dockerfile failed (a RUN that
	// exits non-zero, a COPY of a missing file, an unknown instruction).
	CodeBuildStepFailed = "build_step_failed"
	// CodeImageInUse: an image a container still uses is not removed.
	CodeImageInUse = "image_in_use"
)

// BuildImage builds spec on the engine with its classic builder: RUN steps
// in containers with no network (NetworkMode none),
// and spec's CPU and memory (no swap); nothing pulled (the caller has
// checked every base is on the engine); no cache shared with other
// builds. The engine's default OCI runtime runs the steps: the classic
// builder takes no per-build runtime.
func (p *Provider) BuildImage(ctx context.Context, spec provider.BuildSpec, progress func(provider.BuildLine)) (provider.BuiltImage, error) {
	before, err := p.imageIDs(ctx)
	if err != nil {
		return provider.BuiltImage{}, err
	}
	cpu, mem := p.buildLimits(ctx, spec)
	labels := map[string]string{provider.LabelManaged: "true", provider.LabelInstance: p.cfg.Instance, provider.LabelProvider: p.Name()}
	maps.Copy(labels, spec.Labels)
	opts := build.ImageBuildOptions{
		Tags: []string{spec.Tag}, Dockerfile: spec.Dockerfile, Labels: labels,
		NoCache: true, Remove: true, ForceRemove: true, PullParent: false,
		NetworkMode: "none",
		CPUPeriod:   100_000, CPUQuota: cpu * 100,
		Memory: mem << 20, MemorySwap: mem << 20,
		Version: build.BuilderV1,
	}
	res, err := p.cli.ImageBuild(ctx, spec.Context, opts)
	if err != nil {
		return provider.BuiltImage{}, engineErr("build an image", err)
	}
	defer res.Body.Close()
	made, berr := readBuild(res.Body, progress)
	if berr != nil {
		p.dropBuild(spec.Tag, made, before)
		return provider.BuiltImage{}, berr
	}
	insp, err := p.cli.ImageInspect(ctx, spec.Tag)
	if err != nil {
		p.dropBuild(spec.Tag, made, before)
		return provider.BuiltImage{}, engineErr("inspect the built image", err)
	}
	return provider.BuiltImage{ID: insp.ID, SizeBytes: insp.Size}, nil
}

// buildLimits are spec's CPU and memory, each at most what the host has
// (the engine refuses a CPU quota above its cores).
func (p *Provider) buildLimits(ctx context.Context, spec provider.BuildSpec) (cpuMillis, memoryMB int64) {
	cpuMillis, memoryMB = spec.CPUMillis, spec.MemoryMB
	if host, err := p.Capacity(ctx); err == nil {
		if host.CPUMillis > 0 && cpuMillis > host.CPUMillis {
			cpuMillis = host.CPUMillis
		}
		if host.MemoryMB > 0 && memoryMB > host.MemoryMB {
			memoryMB = host.MemoryMB
		}
	}
	return cpuMillis, memoryMB
}

// imageIDs are the ids of every image on the engine (intermediate ones too).
func (p *Provider) imageIDs(ctx context.Context) (map[string]bool, error) {
	imgs, err := p.cli.ImageList(ctx, image.ListOptions{All: true})
	if err != nil {
		return nil, engineErr("list images", err)
	}
	ids := map[string]bool{}
	for _, img := range imgs {
		ids[img.ID] = true
	}
	return ids, nil
}

// buildMessage is one message of the engine's build stream.
type buildMessage struct {
	Stream      string `json:"stream"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

var (
	stepRE  = regexp.MustCompile(`^Step (\d+)/(\d+) : (.*)$`)
	madeRE  = regexp.MustCompile(`^ ---> ([0-9a-f]{12,64})$`)
	runInRE = regexp.MustCompile(`^ ---> (Running in|Using cache)`)
	// ansiRE: the colour the engine puts around a step's stderr.
	ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")
)

// readBuild reads the engine's build stream to its end, telling progress
// each step and line of output, and returns the ids of the images the
// steps made (to remove if the build fails) and the build's error.
func readBuild(r io.Reader, progress func(provider.BuildLine)) (made []string, err error) {
	dec := json.NewDecoder(r)
	step, pending := 0, ""
	for {
		var m buildMessage
		if derr := dec.Decode(&m); derr != nil {
			if errors.Is(derr, io.EOF) {
				return made, nil
			}
			return made, engineErr("read the build's progress", derr)
		}
		if m.Error != "" || m.ErrorDetail != nil {
			msg := m.Error
			if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
				msg = m.ErrorDetail.Message
			}
			return made, errdefs.InvalidArgument(CodeBuildStepFailed, "step %d failed: %s", step, strings.TrimSpace(msg))
		}
		pending += m.Stream
		for {
			line, rest, ok := strings.Cut(pending, "\n")
			if !ok {
				break
			}
			pending = rest
			step = buildLine(line, step, &made, progress)
		}
	}
}

// buildLine tells progress one line of the build's output and returns the
// step it is in; an image a step made is added to made.
func buildLine(line string, step int, made *[]string, progress func(provider.BuildLine)) int {
	line = ansiRE.ReplaceAllString(strings.TrimRight(line, "\r"), "")
	switch {
	case stepRE.MatchString(line):
		m := stepRE.FindStringSubmatch(line)
		n, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		progress(provider.BuildLine{Step: n, Steps: total, Text: m[3]})
		return n
	case madeRE.MatchString(line):
		*made = append(*made, madeRE.FindStringSubmatch(line)[1])
		progress(provider.BuildLine{Text: line})
	case runInRE.MatchString(line), strings.HasPrefix(line, "Removing intermediate container"),
		strings.HasPrefix(line, "Successfully built"), strings.HasPrefix(line, "Successfully tagged"), line == "":
	default:
		progress(provider.BuildLine{Text: line})
	}
	return step
}

// dropBuild removes what a failed build made: its tag, and each image a
// step made that was not on the engine before it (never a base image).
func (p *Provider) dropBuild(tag string, made []string, before map[string]bool) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := p.removeImage(ctx, tag, image.RemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
		p.logger.Warn("remove a failed build's image", "image", tag, "err", err)
	}
	for i := len(made) - 1; i >= 0; i-- {
		insp, err := p.cli.ImageInspect(ctx, made[i])
		if err != nil || before[insp.ID] || len(insp.RepoTags) > 0 {
			continue
		}
		if err := p.removeImage(ctx, insp.ID, image.RemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			p.logger.Warn("remove a failed build's step image", "image", insp.ID, "err", err)
		}
	}
}

// RemoveImage removes ref, an image this provider built.
func (p *Provider) RemoveImage(ctx context.Context, ref string) error {
	insp, err := p.cli.ImageInspect(ctx, ref)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return errdefs.NotFound(CodeImageNotFound, "image %q is not on this engine", ref).WithCause(err)
		}
		return engineErr("inspect the image", err)
	}
	if insp.Config == nil || insp.Config.Labels[provider.LabelManaged] != "true" || insp.Config.Labels[provider.LabelInstance] != p.cfg.Instance {
		return errdefs.NotFound(CodeImageNotFound, "image %q was not built here", ref)
	}
	err = p.removeImage(ctx, ref, image.RemoveOptions{PruneChildren: true})
	switch {
	case cerrdefs.IsConflict(err):
		return errdefs.Conflict(CodeImageInUse, "image %q is used by a sandbox", ref).WithCause(err)
	case cerrdefs.IsNotFound(err):
		return errdefs.NotFound(CodeImageNotFound, "image %q is not on this engine", ref).WithCause(err)
	}
	return engineErr(fmt.Sprintf("remove image %s", ref), err)
}

// removeImage removes an image from the engine, and forgets what
// CheckImage saw.
func (p *Provider) removeImage(ctx context.Context, ref string, opts image.RemoveOptions) error {
	defer p.seen.forget()
	_, err := p.cli.ImageRemove(ctx, ref, opts)
	return err
}
