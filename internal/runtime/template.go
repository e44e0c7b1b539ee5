package runtime

import (
	"context"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
)

// Codes of a runtime's harness and model.
const (
	// CodeUnknownHarness refuses a harness the installation does not
	// have (the same code a prompt naming one answers).
	CodeUnknownHarness = "unknown_harness"
	// CodeInvalidModel refuses a model name a harness could not be given.
	CodeInvalidModel = "invalid_model"
)

// Codes of templates.
const (
	CodeTemplateExists   = "template_exists"
	CodeTemplateNotFound = "template_not_found"
)

// modelRE is a model's name as the harnesses' CLIs take it
// (claude-sonnet-4-5, gpt-5-codex, openai/gpt-4.1, kimi-k2:latest): never
// read as a flag, at most 128 characters.
var modelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$`)

// checkAgent refuses a harness the installation does not have and a
// model name a harness could not be given.
func checkAgent(c store.RuntimeConfig) error {
	if c.Harness != "" {
		if _, ok := harness.Lookup(c.Harness); !ok {
			var names []string
			for _, h := range harness.All() {
				names = append(names, h.Name)
			}
			return errdefs.InvalidArgument(CodeUnknownHarness, "unknown harness %q; GET /api/capabilities lists them (%s)", c.Harness, strings.Join(names, ", "))
		}
	}
	if c.Model != "" && !modelRE.MatchString(c.Model) {
		return errdefs.InvalidArgument(CodeInvalidModel, "model %q is not a model name: letters, digits and . _ : / @ + -, starting with a letter or digit, at most 128 characters", c.Model)
	}
	return nil
}

// checkConfig resolves req as a runtime of workspace ws would have it and
// runs every check a project's creation runs: bounds, allow-list, the
// provider's offer, the image's presence and the secrets it names.
func (s *Service) checkConfig(ctx context.Context, ws store.Workspace, req ConfigRequest) (store.RuntimeConfig, error) {
	cfg, err := s.resolveConfig(ctx, ws.OrgID, req)
	if err != nil {
		return cfg, err
	}
	if err := checkRulesApply(cfg.Network.Mode, cfg.Network.Allow, cfg.Network.Deny); err != nil {
		return cfg, err
	}
	if err := s.checkOffered(ctx, cfg); err != nil {
		return cfg, err
	}
	if err := s.checkImagePresent(ctx, cfg); err != nil {
		return cfg, err
	}
	if err := s.checkSecretRefs(ctx, store.Runtime{OrgID: ws.OrgID, WorkspaceID: ws.ID}, cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// CreateTemplate checks c as a project's runtime config is checked, and
// keeps it, as given (what it leaves out stays the installation's
// default, applied when a project is made from it), under name in ws.
func (s *Service) CreateTemplate(ctx context.Context, ws store.Workspace, name, description string, c ConfigRequest) (store.Template, error) {
	if _, err := s.checkConfig(ctx, ws, c); err != nil {
		return store.Template{}, err
	}
	t := store.Template{ID: uuid.NewString(), OrgID: ws.OrgID, WorkspaceID: ws.ID, Name: name,
		Description: description, Config: c, CreatedAt: s.now()}
	if err := s.store.CreateTemplate(ctx, t); err != nil {
		if errdefs.IsConflict(err) {
			return store.Template{}, errdefs.Conflict(CodeTemplateExists, "a template named %q already exists in this workspace", name).WithCause(err)
		}
		return store.Template{}, err
	}
	return s.store.GetTemplate(ctx, t.ID)
}

// Template finds ws's template by id or name; another workspace's is not
// found.
func (s *Service) Template(ctx context.Context, ws store.Workspace, ref string) (store.Template, error) {
	t, err := s.store.GetTemplateByName(ctx, ws.ID, ref)
	if errdefs.IsNotFound(err) {
		if _, perr := uuid.Parse(ref); perr == nil {
			t, err = s.store.GetTemplate(ctx, ref)
		}
	}
	if err == nil && t.WorkspaceID != ws.ID {
		err = errdefs.ErrNotFound
	}
	if errdefs.IsNotFound(err) {
		return store.Template{}, errdefs.NotFound(CodeTemplateNotFound, "template %q not found in this workspace", ref)
	}
	return t, err
}

// Templates lists ws's templates, oldest first.
func (s *Service) Templates(ctx context.Context, wsID string, page store.Page) ([]store.Template, string, error) {
	return s.store.ListTemplates(ctx, wsID, page)
}

// DeleteTemplate deletes t; the projects made from it keep their config.
func (s *Service) DeleteTemplate(ctx context.Context, t store.Template) error {
	return s.store.DeleteTemplate(ctx, t.ID)
}

// FromTemplate is the runtime config of a project made from template t
// with its own settings c: each setting c gives overrides the template's
// (the network as a whole, when c names its mode).
func FromTemplate(t, c store.RuntimeConfig) store.RuntimeConfig {
	out := t
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	setInt := func(dst *int64, v int64) {
		if v != 0 {
			*dst = v
		}
	}
	set(&out.Image, c.Image)
	set(&out.Provider, c.Provider)
	if c.Ports != nil {
		out.Ports = c.Ports
	}
	set(&out.RootFS, c.RootFS)
	set(&out.User, c.User)
	set(&out.Harness, c.Harness)
	set(&out.Model, c.Model)
	setInt(&out.CPUMillis, c.CPUMillis)
	setInt(&out.MemoryMB, c.MemoryMB)
	setInt(&out.PidsLimit, c.PidsLimit)
	setInt(&out.DiskMB, c.DiskMB)
	setInt(&out.IdleTimeoutSeconds, c.IdleTimeoutSeconds)
	setInt(&out.MaxLifetimeSeconds, c.MaxLifetimeSeconds)
	setInt(&out.ArchiveAfterSeconds, c.ArchiveAfterSeconds)
	if c.Network.Mode != "" {
		out.Network = c.Network
	}
	if c.Secrets != nil {
		out.Secrets = c.Secrets
	}
	if c.Sidecars != nil {
		out.Sidecars = c.Sidecars
		if c.Image == "" && sidecar.IsImage(out.Image) {
			out.Image = "" // chosen by the template's sidecars: chosen again
		}
	}
	if c.Env != nil {
		out.Env = c.Env
	}
	return out
}
