package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// The events of a template build's stream.
const (
	BuildEventStarted = "started"
	BuildEventStep    = "step"
	BuildEventOutput  = "output"
	BuildEventDone    = "done"
	BuildEventError   = "error"
)

// BuildTemplate builds template's image in org/ws from buildContext, a tar
// holding the Dockerfile at dockerfile ("" for "Dockerfile"), on the
// server's engine from local base images. It calls progress with each
// event as it comes (started, step, output) and returns the build and the
// template it created or updated. A refusal before the build runs is an
// *Error as for any call; a build that fails is an *Error with its code
// (build_step_failed, build_timeout, …), with the build recorded as
// failed.
func (c *Client) BuildTemplate(ctx context.Context, org, ws, template, dockerfile string, buildContext io.Reader, progress func(TemplateBuildEvent)) (TemplateBuild, Template, error) {
	var q url.Values
	if dockerfile != "" {
		q = url.Values{"dockerfile": {dockerfile}}
	}
	resp, err := c.open(ctx, http.MethodPost, wsRoute(org, ws, "templates", template, "builds"), q, buildContext, "application/x-tar", ndjson)
	if err != nil {
		return TemplateBuild{}, Template{}, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev TemplateBuildEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return TemplateBuild{}, Template{}, fmt.Errorf("paddock: the build's stream ended before its result: %w", err)
		}
		switch ev.Event {
		case BuildEventDone:
			if ev.Build == nil || ev.Template == nil {
				return TemplateBuild{}, Template{}, errors.New("paddock: a build's done event without its build and template")
			}
			return *ev.Build, *ev.Template, nil
		case BuildEventError:
			e := Error{Code: "internal", Message: "the build failed"}
			if ev.Error != nil {
				e = *ev.Error
			}
			e.StatusCode = buildErrorStatus[e.Code]
			var b TemplateBuild
			if ev.Build != nil {
				b = *ev.Build
			}
			return b, Template{}, &e
		}
		if progress != nil {
			progress(ev)
		}
	}
}

// buildErrorStatus is the status a build's error event stands for (its
// kind for errors.Is); the status line was 200 when it came.
var buildErrorStatus = map[string]int{
	"build_step_failed": http.StatusBadRequest,
	"build_timeout":     http.StatusServiceUnavailable,
}

// ListTemplateBuilds lists one page of org/ws's template builds, oldest
// first; only template's when it is not "".
func (c *Client) ListTemplateBuilds(ctx context.Context, org, ws, template string, opts ListOptions) (List[TemplateBuild], error) {
	q := opts.query()
	if template != "" {
		q.Set("template", template)
	}
	return call[List[TemplateBuild]](ctx, c, http.MethodGet, wsRoute(org, ws, "template-builds"), q, nil)
}

// GetTemplateBuild returns a template build of org/ws.
func (c *Client) GetTemplateBuild(ctx context.Context, org, ws, buildID string) (TemplateBuild, error) {
	return call[TemplateBuild](ctx, c, http.MethodGet, wsRoute(org, ws, "template-builds", buildID), nil, nil)
}
