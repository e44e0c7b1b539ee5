package dialect

import (
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// TemplateBuild names template builds' records; OrgImage an org's image.
const (
	TemplateBuild Resource = "template_build"
	OrgImage      Resource = "org_image"
)

// CheckTemplateBuild validates a new build.
func CheckTemplateBuild(b store.TemplateBuild) error {
	if err := Required(TemplateBuild, "id", b.ID, "org id", b.OrgID, "workspace id", b.WorkspaceID,
		"template", b.Template, "image", b.Image); err != nil {
		return err
	}
	if b.State != store.BuildBuilding {
		return errdefs.InvalidArgument("invalid_template_build", "a build is recorded when it begins (state building)")
	}
	return nil
}

// CheckBuildEnd validates a build's end.
func CheckBuildEnd(b store.TemplateBuild) error {
	if b.State != store.BuildSucceeded && b.State != store.BuildFailed {
		return errdefs.InvalidArgument("invalid_template_build", "a build ends succeeded or failed, not %q", b.State)
	}
	if b.SizeBytes < 0 {
		return errdefs.InvalidArgument("invalid_template_build", "a build's size is not negative")
	}
	return nil
}

// BuildFinished is the refusal to end a build twice.
func BuildFinished(id string) error {
	return errdefs.Conflict("template_build_finished", "template build %s has ended already", id)
}
