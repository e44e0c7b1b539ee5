package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// decodeJSON decodes the request body strictly into v: one JSON object, no
// unknown fields, no key twice, no null for a required field, no trailing
// data, within the route's body limit (guard). An empty body is allowed when optional is
// true and leaves v untouched.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return &errdefs.Error{Kind: errdefs.ErrInvalidArgument, Code: "unsupported_media_type", Message: "the request body must be application/json"}
		}
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return jsonError(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if errors.Is(err, io.EOF) {
		if optional {
			return nil
		}
		return errdefs.InvalidArgument("missing_body", "the request needs a JSON body")
	}
	if err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return errdefs.InvalidArgument("malformed_json", "the body must hold exactly one JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return jsonError(err)
		}
		return errdefs.InvalidArgument("malformed_json", "the body must hold exactly one JSON object")
	}
	return checkStrictJSON(raw, v)
}

func jsonError(err error) error {
	var (
		maxErr    *http.MaxBytesError
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &maxErr):
		return bodyTooLarge(maxErr)
	case errors.As(err, &syntaxErr):
		return errdefs.InvalidArgument("malformed_json", "the body is not valid JSON (at byte %d)", syntaxErr.Offset)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return errdefs.InvalidArgument("malformed_json", "the body must be a JSON object")
		}
		return errdefs.InvalidArgument("invalid_field_type", "field %q must be of type %s", field, typeErr.Type.String())
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for unknown fields; this text
		// is its documented, stable form.
		return errdefs.InvalidArgument("unknown_field", "the body has an unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errdefs.InvalidArgument("malformed_json", "the body ends in the middle of a JSON value")
	}
	return errdefs.InvalidArgument("malformed_json", "the body is not a valid JSON object")
}

// pageFrom reads ?cursor= and ?limit=.
func pageFrom(r *http.Request) (store.Page, error) {
	q := r.URL.Query()
	p := store.Page{Cursor: q.Get("cursor")}
	if len(p.Cursor) > 512 {
		return p, errdefs.InvalidArgument("invalid_cursor", "the cursor is not one this server issued")
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > store.MaxLimit {
			return p, errdefs.InvalidArgument("invalid_limit", "limit must be an integer from 1 to %d", store.MaxLimit)
		}
		p.Limit = n
	}
	return p, nil
}

// orgPage resolves {org}, then reads the page the query asks for.
func (a *API) orgPage(r *http.Request) (store.Org, store.Page, error) {
	o, err := a.org(r)
	if err != nil {
		return o, store.Page{}, err
	}
	page, err := pageFrom(r)
	return o, page, err
}

// workspacePage resolves {org}/{workspace}, then reads the page the query
// asks for.
func (a *API) workspacePage(r *http.Request) (store.Workspace, store.Page, error) {
	_, ws, err := a.workspace(r)
	if err != nil {
		return ws, store.Page{}, err
	}
	page, err := pageFrom(r)
	return ws, page, err
}

// runtimePage resolves {runtime_id} in {org}/{workspace}, then reads the
// page the query asks for.
func (a *API) runtimePage(r *http.Request) (store.Runtime, store.Page, error) {
	rt, err := a.runtimeOf(r)
	if err != nil {
		return rt, store.Page{}, err
	}
	page, err := pageFrom(r)
	return rt, page, err
}

// listError gives a store's cursor complaint its public code.
func listError(err error) error {
	if _, ok := errdefs.Public(err); !ok && errors.Is(err, errdefs.ErrInvalidArgument) {
		return errdefs.InvalidArgument("invalid_cursor", "the cursor is not one this server issued").WithCause(err)
	}
	return err
}

// listOf shows one page of items, each with view.
func listOf[T, V any](items []T, next string, view func(T) V) client.List[V] {
	out := client.List[V]{Items: make([]V, 0, len(items)), NextCursor: next}
	for _, it := range items {
		out.Items = append(out.Items, view(it))
	}
	return out
}

// tryListOf is listOf with a view that looks things up and can fail.
func tryListOf[T, V any](ctx context.Context, items []T, next string, view func(context.Context, T) (V, error)) (client.List[V], error) {
	out := client.List[V]{Items: make([]V, 0, len(items)), NextCursor: next}
	for _, it := range items {
		v, err := view(ctx, it)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, v)
	}
	return out, nil
}

// bodyTooLarge is the 413 of a body past its route's limit.
func bodyTooLarge(e *http.MaxBytesError) error {
	return &errdefs.Error{Kind: errdefs.ErrResourceExhausted, Code: "body_too_large", Message: fmt.Sprintf("the request body is larger than %d bytes", e.Limit)}
}
