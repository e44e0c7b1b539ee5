package api

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/pkg/client"
)

// listImages lists the sandbox images and how far their builds are.
func (a *API) listImages(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, client.List[client.ImageStatus]{Items: a.imageStatuses(r.Context())})
	return nil
}

// imageStatuses are the images the installation knows, the default one
// first: those /api/capabilities describes, the sidecars' and the image
// builder's. What the builder makes says how far its build is; any other
// is ready or missing on the default provider.
func (a *API) imageStatuses(ctx context.Context) []client.ImageStatus {
	refs := slices.Clone(a.images)
	if len(refs) == 0 && a.runtimes != nil {
		refs = []string{a.runtimes.Defaults().Image}
	}
	for _, sc := range sidecar.Known() {
		refs = append(refs, sc.Image)
	}
	var built []imagebuild.Image
	if a.builds != nil {
		built = a.builds.Images()
		for _, im := range built {
			refs = append(refs, im.Ref)
		}
	}
	var in provider.ImageInspector
	if p, err := a.providers.Get(a.providers.Default()); err == nil {
		in, _ = p.(provider.ImageInspector)
	}
	out := []client.ImageStatus{}
	seen := map[string]bool{}
	for _, ref := range refs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		if i := slices.IndexFunc(built, func(im imagebuild.Image) bool { return im.Ref == ref }); i >= 0 {
			out = append(out, imageStatusOf(built[i]))
			continue
		}
		st := client.ImageStatus{Image: ref, State: string(imagebuild.Missing)}
		if in != nil {
			if present, _ := provider.ImagePresent(ctx, in, ref); present {
				st.State, st.Present = string(imagebuild.Ready), true
			}
		}
		out = append(out, st)
	}
	return out
}

func imageStatusOf(im imagebuild.Image) client.ImageStatus {
	at := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		t = t.UTC()
		return &t
	}
	return client.ImageStatus{
		Image: im.Ref, Target: im.Target, State: string(im.State), Present: im.Present,
		Step: im.Step, Steps: im.Steps, Progress: imagebuild.Progress(im),
		StartedAt: at(im.StartedAt), EndedAt: at(im.EndedAt),
	}
}
