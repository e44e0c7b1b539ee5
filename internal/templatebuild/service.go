// Package templatebuild builds a template's image from a Dockerfile on the
// host's engine (the provider's ImageBuilder), from base images already
// there, with no registry: the image is tagged for its org
// (paddock-org/<org id>/<template>:<build id>), put on that org's own
// allow-list and no other's, and the template is created or pointed at
// it. Each build is recorded (store.TemplateBuild) from its start, and
// its progress is told line by line as it comes.
package templatebuild

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// Codes of a build.
const (
	// CodeBaseImageNotFound: a base the Dockerfile names is not on the
	// engine (nothing is pulled).
	CodeBaseImageNotFound = "base_image_not_found"
	// CodeBuildTimeout: the build ran past the installation's limit.
	CodeBuildTimeout = "build_timeout"
	// CodeBuildNotFound: no such build in the workspace.
	CodeBuildNotFound = "template_build_not_found"
	// CodeBuildsNotSupported: the provider builds no images.
	CodeBuildsNotSupported = "image_build_not_supported"
)

// Defaults of Config's limits.
const (
	DefaultMaxContextBytes = 256 << 20
	DefaultTimeout         = 15 * time.Minute
	DefaultCPUMillis       = 2000
	DefaultMemoryMB        = 2048
	logTailBytes           = 8 << 10
)

// Store is what the service keeps of builds and of the orgs' images.
type Store interface {
	store.TemplateBuildQueries
}

// Config configures a Service.
type Config struct {
	Store     Store
	Runtimes  *runtime.Service
	Providers *provider.Registry
	// Provider builds the images ("" = the registry's default).
	Provider string
	// MaxContextBytes, Timeout, CPUMillis and MemoryMB bound a build
	// (0 = the defaults above).
	MaxContextBytes int64
	Timeout         time.Duration
	CPUMillis       int64
	MemoryMB        int64
	Logger          *slog.Logger
	Now             func() time.Time
}

// Service builds templates' images.
type Service struct {
	cfg Config
	// stop and done end the sweeps (sweep.go).
	stop context.CancelFunc
	done chan struct{}
}

// New returns a Service with cfg's zero limits defaulted.
func New(cfg Config) *Service {
	if cfg.MaxContextBytes <= 0 {
		cfg.MaxContextBytes = DefaultMaxContextBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.CPUMillis <= 0 {
		cfg.CPUMillis = DefaultCPUMillis
	}
	if cfg.MemoryMB <= 0 {
		cfg.MemoryMB = DefaultMemoryMB
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{cfg: cfg}
}

// Request is one build asked for.
type Request struct {
	Workspace store.Workspace
	Template  string
	// Dockerfile is its path in the context ("" = "Dockerfile").
	Dockerfile string
	// Context is the body: a tar of the build context.
	Context io.Reader
}

// Job is a build checked and ready to run: nothing of it is recorded or
// made yet. Close it when done.
type Job struct {
	req      Request
	builder  provider.ImageBuilder
	provider string
	context  *os.File
}

// Close removes the job's spooled context.
func (j *Job) Close() {
	j.context.Close()
	os.Remove(j.context.Name())
}

// Prepare checks req before anything runs: the template's name, the
// context (a tar within the size limit holding the Dockerfile), the
// Dockerfile, and each base it names (allowed for the org, and on the
// engine: base_image_not_found otherwise, never pulled).
func (s *Service) Prepare(ctx context.Context, req Request) (*Job, error) {
	if err := tenancy.ValidName("template", req.Template); err != nil {
		return nil, err
	}
	if req.Dockerfile == "" {
		req.Dockerfile = "Dockerfile"
	}
	name := s.cfg.Provider
	if name == "" {
		name = s.cfg.Providers.Default()
	}
	p, err := s.cfg.Providers.Get(name)
	if err != nil {
		return nil, err
	}
	ib, ok := p.(provider.ImageBuilder)
	in, ok2 := p.(provider.ImageInspector)
	if !ok || !ok2 {
		return nil, errdefs.NotImplemented(CodeBuildsNotSupported, "provider %q builds no images", name)
	}
	f, text, err := spoolContext(req.Context, s.cfg.MaxContextBytes, req.Dockerfile)
	if err != nil {
		return nil, err
	}
	job := &Job{req: req, builder: ib, provider: name, context: f}
	if err := s.checkBases(ctx, req.Workspace.OrgID, name, in, text); err != nil {
		job.Close()
		return nil, err
	}
	return job, nil
}

// checkBases refuses a Dockerfile whose bases the org may not use or the
// engine does not have.
func (s *Service) checkBases(ctx context.Context, orgID, providerName string, in provider.ImageInspector, text string) error {
	ins, err := parseDockerfile(text)
	if err != nil {
		return err
	}
	bases, err := baseImages(ins)
	if err != nil {
		return err
	}
	for _, b := range bases {
		if err := s.cfg.Runtimes.CheckImage(ctx, orgID, providerName, b); err != nil {
			return err
		}
		ok, err := provider.ImagePresent(ctx, in, b)
		if err != nil {
			return err
		}
		if !ok {
			return errdefs.InvalidArgument(CodeBaseImageNotFound, "base image %q is not on this host; a build uses local images only and pulls nothing (GET /api/images lists them)", b)
		}
	}
	return nil
}

// Result is a finished build: its record and, when it succeeded, the
// template it made or updated.
type Result struct {
	Build    store.TemplateBuild
	Template store.Template
}

// Run records the build (telling started), runs it telling progress each line, and, when it
// succeeds, puts its image on the org's allow-list and creates or updates
// the template. A failure is recorded with its code and answered; it
// leaves no image.
func (s *Service) Run(ctx context.Context, j *Job, started func(store.TemplateBuild), progress func(provider.BuildLine)) (Result, error) {
	ws := j.req.Workspace
	id := uuid.NewString()
	b := store.TemplateBuild{
		ID: id, OrgID: ws.OrgID, WorkspaceID: ws.ID, Template: j.req.Template, State: store.BuildBuilding,
		Image: runtime.OrgImagePrefix + ws.OrgID + "/" + j.req.Template + ":" + id, CreatedAt: s.cfg.Now(),
	}
	if err := s.cfg.Store.CreateTemplateBuild(ctx, b); err != nil {
		return Result{}, err
	}
	b.CreatedAt = b.CreatedAt.Truncate(time.Microsecond)
	b.UpdatedAt = b.CreatedAt
	started(b)
	tail := &logTail{}
	built, err := s.build(ctx, j, b, func(l provider.BuildLine) {
		tail.add(l)
		progress(l)
	})
	var t store.Template
	if err == nil {
		t, err = s.adopt(ctx, ws, b)
		if err != nil {
			s.drop(b)
		}
	}
	b.LogTail, b.UpdatedAt = tail.String(), s.cfg.Now()
	if err != nil {
		b.State, b.ErrorCode = store.BuildFailed, codeOf(err)
	} else {
		b.State, b.Digest, b.SizeBytes = store.BuildSucceeded, built.ID, built.SizeBytes
	}
	// Recorded even when the caller has gone.
	if ferr := s.cfg.Store.FinishTemplateBuild(context.WithoutCancel(ctx), b); ferr != nil && err == nil {
		err = ferr
	}
	b.UpdatedAt = b.UpdatedAt.Truncate(time.Microsecond)
	return Result{Build: b, Template: t}, err
}

// build runs the build within the time limit.
func (s *Service) build(ctx context.Context, j *Job, b store.TemplateBuild, progress func(provider.BuildLine)) (provider.BuiltImage, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	built, err := j.builder.BuildImage(ctx, provider.BuildSpec{
		Context: j.context, Dockerfile: j.req.Dockerfile, Tag: b.Image,
		Labels:    map[string]string{provider.LabelOrg: b.OrgID, LabelTemplateBuild: b.ID},
		CPUMillis: s.cfg.CPUMillis, MemoryMB: s.cfg.MemoryMB,
	}, progress)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return built, errdefs.Unavailable(CodeBuildTimeout, "the build ran longer than %s and was stopped", s.cfg.Timeout).WithCause(err)
	}
	return built, err
}

// LabelTemplateBuild is the label of a built image naming its build.
const LabelTemplateBuild = "dev.paddock.template_build"

// adopt puts b's image on its org's allow-list and creates the template
// with it, or points the existing one at it.
func (s *Service) adopt(ctx context.Context, ws store.Workspace, b store.TemplateBuild) (store.Template, error) {
	if err := s.cfg.Store.AddOrgImage(ctx, b.OrgID, b.Image, b.ID); err != nil {
		return store.Template{}, err
	}
	t, err := s.cfg.Runtimes.Template(ctx, ws, b.Template)
	switch {
	case errdefs.IsNotFound(err):
		return s.cfg.Runtimes.CreateTemplate(ctx, ws, b.Template, "", runtime.ConfigRequest{Image: b.Image, Provider: s.cfg.Provider})
	case err != nil:
		return t, err
	}
	return s.cfg.Runtimes.SetTemplateImage(ctx, ws, t, b.Image)
}

// drop removes a built image its template could not take.
func (s *Service) drop(b store.TemplateBuild) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.cfg.Store.DeleteOrgImage(ctx, b.OrgID, b.Image); err != nil && !errdefs.IsNotFound(err) {
		s.cfg.Logger.Warn("take a build's image off its org's allow-list", "image", b.Image, "err", err)
	}
	s.removeImage(ctx, b.Image)
}

func (s *Service) removeImage(ctx context.Context, image string) {
	p, err := s.cfg.Providers.Get(s.providerName())
	if err == nil {
		if ib, ok := p.(provider.ImageBuilder); ok {
			err = ib.RemoveImage(ctx, image)
		}
	}
	if err != nil && !errdefs.IsNotFound(err) {
		s.cfg.Logger.Warn("remove a built image", "image", image, "err", err)
	}
}

func (s *Service) providerName() string {
	if s.cfg.Provider != "" {
		return s.cfg.Provider
	}
	return s.cfg.Providers.Default()
}

// codeOf is err's public code ("internal" for one without).
func codeOf(err error) string {
	if pe, ok := errdefs.Public(err); ok {
		return pe.Code
	}
	return "internal"
}

// logTail keeps the end of a build's output.
type logTail struct{ b strings.Builder }

func (t *logTail) add(l provider.BuildLine) {
	line := l.Text
	if l.Step > 0 {
		line = "Step " + itoa(l.Step) + "/" + itoa(l.Steps) + " : " + l.Text
	}
	t.b.WriteString(line + "\n")
	if s := t.b.String(); len(s) > 2*logTailBytes {
		t.b.Reset()
		t.b.WriteString(s[len(s)-logTailBytes:])
	}
}

func (t *logTail) String() string {
	s := t.b.String()
	if len(s) > logTailBytes {
		s = s[len(s)-logTailBytes:]
	}
	return s
}
