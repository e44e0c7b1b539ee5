package api

import (
	"mime"
	"net/http"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/templatebuild"
	"github.com/paddockhq/paddock/pkg/client"
)

// TemplateBuilds builds templates' images from Dockerfiles and lists the
// builds.
func TemplateBuilds(s *templatebuild.Service) Feature {
	return Feature{Name: "template_builds", use: func(a *API) { a.tplBuilds = s }, routes: func(a *API) []Route {
		return []Route{
			route("POST", wsPrefix+"/templates/{template}/builds", admin, a.buildTemplate).upload(),
			route("GET", wsPrefix+"/template-builds", viewer, a.listTemplateBuilds),
			route("GET", wsPrefix+"/template-builds/{build_id}", viewer, a.getTemplateBuild),
		}
	}}
}

// templateBuildOut renders a build.
func templateBuildOut(b store.TemplateBuild) client.TemplateBuild {
	return client.TemplateBuild{
		ID: b.ID, WorkspaceID: b.WorkspaceID, Template: b.Template, State: b.State, Image: b.Image, Digest: b.Digest,
		SizeBytes: b.SizeBytes, ErrorCode: b.ErrorCode, LogTail: b.LogTail, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt,
	}
}

// buildTemplate checks the build (a plain error answer for what is
// refused before it runs), then streams its progress as NDJSON and ends
// with done or error.
func (a *API) buildTemplate(w http.ResponseWriter, r *http.Request) error {
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-tar" {
		return errdefs.InvalidArgument("unsupported_media_type", "the body must be the build context as application/x-tar")
	}
	job, err := a.tplBuilds.Prepare(r.Context(), templatebuild.Request{
		Workspace: ws, Template: r.PathValue("template"), Dockerfile: r.URL.Query().Get("dockerfile"), Context: r.Body,
	})
	if err != nil {
		return err
	}
	defer job.Close()
	ev := newEventWriter(w)
	res, err := a.tplBuilds.Run(r.Context(), job, func(b store.TemplateBuild) {
		out := templateBuildOut(b)
		_ = ev.send(client.TemplateBuildEvent{Event: "started", Build: &out})
	}, func(l provider.BuildLine) {
		kind := "output"
		if l.Step > 0 {
			kind = "step"
		}
		_ = ev.send(client.TemplateBuildEvent{Event: kind, Step: l.Step, Steps: l.Steps, Text: l.Text})
	})
	if err != nil {
		body := client.Error{RequestID: requestIDFrom(r.Context()), Code: "internal", Message: "internal error; the server logged the details under this request id"}
		if pe, ok := errdefs.Public(err); ok {
			body.Code, body.Message = pe.Code, pe.Message
		} else {
			a.logger.ErrorContext(r.Context(), "template build failed", "err", err)
		}
		out := client.TemplateBuildEvent{Event: "error", Error: &body}
		if res.Build.ID != "" {
			b := templateBuildOut(res.Build)
			out.Build = &b
		}
		return ev.send(out)
	}
	b, t := templateBuildOut(res.Build), templateOut(res.Template)
	return ev.send(client.TemplateBuildEvent{Event: "done", Build: &b, Template: &t})
}

func (a *API) listTemplateBuilds(w http.ResponseWriter, r *http.Request) error {
	ws, page, err := a.workspacePage(r)
	if err != nil {
		return err
	}
	bs, next, err := a.tplBuilds.List(r.Context(), ws, r.URL.Query().Get("template"), page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(bs, next, templateBuildOut))
	return nil
}

func (a *API) getTemplateBuild(w http.ResponseWriter, r *http.Request) error {
	_, ws, err := a.workspace(r)
	if err != nil {
		return err
	}
	id := r.PathValue("build_id")
	if !isUUID(id) {
		return errdefs.NotFound(templatebuild.CodeBuildNotFound, "no template build %s in this workspace", id)
	}
	b, err := a.tplBuilds.Get(r.Context(), ws, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, templateBuildOut(b))
	return nil
}

// removeBuiltImages removes, once template t is deleted, the images its
// builds made that no runtime or template of its org names; an image
// still named stays (on the org's allow-list and the engine).
func (a *API) removeBuiltImages(r *http.Request, t store.Template) {
	if a.tplBuilds == nil {
		return
	}
	_, ws, err := a.workspace(r)
	if err == nil {
		var kept []string
		kept, err = a.tplBuilds.RemoveImages(r.Context(), ws, t)
		if len(kept) > 0 {
			a.logger.InfoContext(r.Context(), "built images kept: still named", "template", t.Name, "images", kept)
		}
	}
	if err != nil {
		a.logger.WarnContext(r.Context(), "remove a deleted template's built images", "template", t.Name, "err", err)
	}
}
