package api_test

import (
	"testing"

	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestTemplateBuildRoutes: a body that is not a tar is 415; a provider
// that builds no images answers 501 image_build_not_supported before
// anything is recorded; builds of another workspace or org, and unknown
// ones, are 404.
func TestTemplateBuildRoutes(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	base := "/api/v1/org/acme/ws/dev"
	wantError(t, env.MustRaw(t, 415, "POST", base+"/templates/web/builds", "application/json", []byte(`{}`)), 415, "unsupported_media_type")
	wantError(t, env.MustRaw(t, 501, "POST", base+"/templates/web/builds", "application/x-tar", make([]byte, 1024)), 501, "image_build_not_supported")
	var l client.List[client.TemplateBuild]
	env.Must(t, 200, "GET", base+"/template-builds", nil).Decode(t, &l)
	if len(l.Items) != 0 {
		t.Fatalf("builds after refusals: %+v", l.Items)
	}
	wantError(t, env.Do(t, "GET", base+"/template-builds/00000000-0000-4000-8000-000000000000", nil), 404, "template_build_not_found")
	wantError(t, env.Do(t, "GET", base+"/template-builds/not-a-uuid", nil), 404, "template_build_not_found")
}
