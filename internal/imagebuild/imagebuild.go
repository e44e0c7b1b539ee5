// Package imagebuild builds the sandbox images a server may still lack, in
// the background once it serves, with a build script
// (scripts/build-images.sh), and tells how far each build has come: the
// API lists it (GET /api/images), and a runtime that needs an image still
// being built is answered image_building rather than left waiting.
//
// The script speaks a small protocol. `SCRIPT --list` prints one
// "TARGET IMAGE" a line. `SCRIPT TARGET` builds TARGET's image (and what
// it derives from), writing to stderr a line
// "build-images: IMAGE step N/M: WHAT" as each step of an image's build
// begins, "build-images: built IMAGE …" when that image is done and
// "build-images: IMAGE is current" for one that needs no build; it exits 0
// when TARGET's image is there.
package imagebuild

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// State is where an image's build stands.
type State string

// The states of an image.
const (
	// Pending: to be built, once the builds before it are done.
	Pending State = "pending"
	// Building: its build runs (an older copy may still be there).
	Building State = "building"
	// Ready: the image is on the engine and no build of it runs.
	Ready State = "ready"
	// Failed: its last build failed (Message says why).
	Failed State = "failed"
	// Missing: not on the engine, and this server does not build it.
	Missing State = "missing"
)

// Codes of a start on an image the builder has not made.
const (
	CodeImageBuilding    = "image_building"
	CodeImageBuildFailed = "image_build_failed"
	// CodeImageNotFound: the builder's image is not there, and this
	// server does not build it.
	CodeImageNotFound = "image_not_found"
)

// RetryAfter is what a caller refused image_building is told to wait.
const RetryAfter = 15 * time.Second

// Image is what the builder knows of one image.
type Image struct {
	Target string
	Ref    string
	State  State
	// Present: the image is on the engine, so runtimes may use it, even
	// while a newer one is being built.
	Present bool
	// Step of Steps is the build step under way (or last reached).
	Step, Steps int
	// Message names the step under way, or the step at which the build
	// failed; never the script's own output (that goes to the server's
	// log only: it may name hosts and credentials).
	Message   string
	StartedAt time.Time
	EndedAt   time.Time
}

// Config configures a Builder.
type Config struct {
	// Script is the build script (see the package doc).
	Script string
	// Targets are built in the background, in this order.
	Targets []string
	// Present reports whether an image is on the engine.
	Present func(ctx context.Context, ref string) (bool, error)
	Logger  *slog.Logger
}

// Builder builds images in the background and keeps their states.
type Builder struct {
	cfg    Config
	logger *slog.Logger
	mu     sync.Mutex
	images []Image // in the script's order
}

// New asks the script which images it builds and which of them are on the
// engine. Every target must be one of the script's.
func New(ctx context.Context, cfg Config) (*Builder, error) {
	b := &Builder{cfg: cfg, logger: cfg.Logger}
	if b.logger == nil {
		b.logger = slog.New(slog.DiscardHandler)
	}
	out, err := exec.CommandContext(ctx, cfg.Script, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("image builder %s --list: %w", cfg.Script, err)
	}
	for line := range strings.Lines(string(out)) {
		target, ref, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		ref = strings.TrimSpace(ref)
		// An engine that cannot answer now (restarting) does not stop the
		// server: the image counts as absent until a build or a start
		// finds it.
		present, err := cfg.Present(ctx, ref)
		if err != nil {
			b.logger.Warn("image builder: cannot inspect an image; taken as absent for now", "image", ref, "err", err)
			present = false
		}
		im := Image{Target: target, Ref: ref, Present: present, State: Ready}
		if !present {
			im.State = Missing
			if slices.Contains(cfg.Targets, target) {
				im.State = Pending
			}
		}
		b.images = append(b.images, im)
	}
	for _, t := range cfg.Targets {
		if b.find(func(im *Image) bool { return im.Target == t }) == nil {
			return nil, fmt.Errorf("image builder %s builds no target %q", cfg.Script, t)
		}
	}
	return b, nil
}

// Images are the images the script builds, with their states.
func (b *Builder) Images() []Image {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.images)
}

// Lookup is the image named ref, if the script builds it.
func (b *Builder) Lookup(ref string) (Image, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if im := b.find(func(im *Image) bool { return im.Ref == ref }); im != nil {
		return *im, true
	}
	return Image{}, false
}

// Expected reports whether ref is not there yet but is being, or will be,
// built: a runtime may be configured with it.
func (b *Builder) Expected(ref string) bool {
	im, ok := b.Lookup(ref)
	return ok && !im.Present && (im.State == Pending || im.State == Building)
}

// Check tells whether a sandbox may start on ref now: nil when the image
// is there or is not the builder's; image_building (unavailable, with
// progress and a retry delay) while it is being or waits to be built;
// image_build_failed when its build failed; image_not_found when this
// server does not build it (it is never pulled).
func (b *Builder) Check(ctx context.Context, ref string) error {
	im, ok := b.Lookup(ref)
	if !ok || im.Present {
		return nil
	}
	// Built meanwhile by someone else (the script run by hand)?
	if present, err := b.cfg.Present(ctx, ref); err == nil && present {
		b.update(ref, func(im *Image) { im.Present = true })
		return nil
	}
	switch im.State {
	case Pending, Building:
		return errdefs.Unavailable(CodeImageBuilding, "image %s is %s (%s); try again shortly, or follow it in GET /api/images", ref, im.State, Progress(im)).
			WithRetryAfter(RetryAfter)
	case Missing:
		// Ours to build, not to pull from a registry (another's
		// namespace there).
		return errdefs.FailedPrecondition(CodeImageNotFound, "image %s is not on this host, and this server does not build it (scripts/build-images.sh %s does)", ref, im.Target)
	case Failed:
		return errdefs.FailedPrecondition(CodeImageBuildFailed, "image %s failed to build, %s (the server's log says why; the server builds it again when it restarts)", ref, Progress(im))
	}
	return nil
}

// Progress says how far im's build is, for people.
func Progress(im Image) string {
	switch {
	case im.State == Pending:
		return "waiting for the builds before it"
	case im.Steps > 0 && im.State == Building:
		return fmt.Sprintf("step %d of %d: %s", im.Step, im.Steps, im.Message)
	case im.Steps > 0 && im.State == Failed:
		return fmt.Sprintf("failed at step %d of %d: %s", im.Step, im.Steps, im.Message)
	case im.State == Failed:
		return "failed before its first step"
	}
	return im.Message
}

// Run builds every target in turn, then returns; ctx ending stops the
// build under way.
func (b *Builder) Run(ctx context.Context) {
	for _, t := range b.cfg.Targets {
		if ctx.Err() != nil {
			return
		}
		b.build(ctx, t)
	}
}

// find is the image f picks; b.mu is held.
func (b *Builder) find(f func(*Image) bool) *Image {
	for i := range b.images {
		if f(&b.images[i]) {
			return &b.images[i]
		}
	}
	return nil
}

func (b *Builder) update(ref string, f func(*Image)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if im := b.find(func(im *Image) bool { return im.Ref == ref }); im != nil {
		f(im)
	}
}

var (
	stepLine    = regexp.MustCompile(`^build-images: (\S+) step (\d+)/(\d+): (.*)$`)
	builtLine   = regexp.MustCompile(`^build-images: built (\S+)`)
	currentLine = regexp.MustCompile(`^build-images: (\S+) is current`)
)

// build runs the script for target and follows what it says.
func (b *Builder) build(ctx context.Context, target string) {
	var ref string
	b.mu.Lock()
	if im := b.find(func(im *Image) bool { return im.Target == target }); im != nil {
		ref = im.Ref
	}
	b.mu.Unlock()
	logger := b.logger.With("target", target, "image", ref)
	logger.Info("running the image builder")
	cmd := exec.CommandContext(ctx, b.cfg.Script, target)
	// The script and what it starts (mmdebstrap, apt, docker) form a
	// group: a server that stops ends them all, and the script's trap
	// cleans up its scratch directories and containers. A server that
	// dies ends the script too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	// Wait owns the copy of stderr, so WaitDelay bounds it even when
	// something the script started (outside its group) keeps the pipe
	// open.
	cmd.WaitDelay = waitDelay
	lines := &lineWriter{line: func(line string) {
		logger.Info("image build", "line", line)
		b.follow(line, time.Now())
	}}
	cmd.Stderr = lines
	err := cmd.Run()
	lines.flush()
	b.finish(ref, err)
}

// waitDelay bounds how long a build's script may take to end once asked
// to, and how long its stderr may stay open after it ended.
const waitDelay = 30 * time.Second

// maxLine bounds a line of the script's kept for following; the rest of a
// longer line is dropped (never blocking the script).
const maxLine = 64 << 10

// lineWriter hands each line written to it to line, without the newline.
type lineWriter struct {
	line    func(string)
	buf     []byte
	skipped bool // the line under way is past maxLine
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxLine - len(w.buf); len(chunk) > room {
			chunk, w.skipped = chunk[:room], true
		}
		w.buf = append(w.buf, chunk...)
		if i < 0 {
			break
		}
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

// flush hands on the line under way, if any.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 || w.skipped {
		line := string(w.buf)
		if w.skipped {
			line += " [line cut]"
		}
		w.line(line)
	}
	w.buf, w.skipped = w.buf[:0], false
}

// follow takes in one line of the script's.
func (b *Builder) follow(line string, now time.Time) {
	if m := stepLine.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[2])
		of, _ := strconv.Atoi(m[3])
		b.update(m[1], func(im *Image) {
			if im.State != Building {
				im.StartedAt, im.EndedAt = now, time.Time{}
			}
			im.State, im.Step, im.Steps, im.Message = Building, n, of, m[4]
		})
	} else if m := builtLine.FindStringSubmatch(line); m != nil {
		b.update(m[1], func(im *Image) {
			im.State, im.Present, im.EndedAt = Ready, true, now
			im.Step, im.Message = im.Steps, ""
		})
	} else if m := currentLine.FindStringSubmatch(line); m != nil {
		// Built since, perhaps after a build of it failed.
		b.update(m[1], func(im *Image) { im.State, im.Present, im.Message = Ready, true, "" })
	}
}

// finish records how the build for ref ended: on success ref is there; on
// failure every image whose build was under way, and ref, failed (an image
// may be there all the same: an older one). The error goes to the log
// only; the images keep the step they failed at.
func (b *Builder) finish(ref string, err error) {
	now := time.Now()
	var present bool
	if err == nil {
		present, err = b.cfg.Present(context.Background(), ref)
		if err == nil && !present {
			err = fmt.Errorf("the script succeeded, but %s is not on the engine", ref)
		}
	}
	var ended []string
	b.mu.Lock()
	for i := range b.images {
		im := &b.images[i]
		if im.Ref != ref && im.State != Building {
			continue
		}
		ended = append(ended, im.Ref)
		im.EndedAt = now
		if err == nil {
			im.State, im.Present, im.Message = Ready, true, ""
			im.Step = im.Steps
			continue
		}
		im.State = Failed
	}
	b.mu.Unlock()
	if err == nil {
		b.logger.Info("image ready", "image", ref)
		return
	}
	b.logger.Error("image build failed", "image", ref, "err", err)
	for _, r := range ended {
		if p, perr := b.cfg.Present(context.Background(), r); perr == nil {
			b.update(r, func(im *Image) { im.Present = p })
		}
	}
}
