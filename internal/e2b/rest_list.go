package e2b

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Listing: the E2B sandboxes of the key's workspace, newest first (order
// asc: oldest first), filtered by state, metadata, template and start
// time. A page holds up
// to limit of them: the store is read a page at a time, each asking for
// no more than the page still lacks (so its cursor is right after the
// last one answered), until the page is full, the store ends, or
// maxListScan records were read. The next page's token is the
// X-Next-Token header, none on the last.

// Bounds of a listing page: E2B's default and largest.
const (
	defaultListLimit = 100
	maxListLimit     = 100
	// maxV1List bounds the sandboxes the v1 listing, which does not page,
	// reads.
	maxV1List = 1000
	// maxListScan bounds the records one page of a filtered listing reads;
	// a page that reached it may hold fewer than limit, with a next token.
	maxListScan = 1000
)

// listFilter is what a listing keeps, and in which order.
type listFilter struct {
	states       []string
	metadata     map[string]string
	template     string
	startedAfter time.Time
	oldestFirst  bool
}

func (f listFilter) keeps(d sandboxDetail) bool {
	if len(f.states) > 0 && !slices.Contains(f.states, d.State) {
		return false
	}
	for k, v := range f.metadata {
		if got, ok := d.Metadata[k]; !ok || got != v {
			return false
		}
	}
	if f.template != "" && f.template != d.TemplateID {
		return false
	}
	return f.startedAfter.IsZero() || d.StartedAt.After(f.startedAfter)
}

// filterOf parses a listing's query.
func filterOf(q url.Values) (listFilter, error) {
	var f listFilter
	for _, v := range q["state"] {
		for s := range strings.SplitSeq(v, ",") {
			if s != stateRunning && s != statePaused {
				return f, errdefs.InvalidArgument("invalid_state", "state %q is neither %s nor %s", s, stateRunning, statePaused)
			}
			f.states = append(f.states, s)
		}
	}
	md, err := metadataFilter(q.Get("metadata"))
	if err != nil {
		return f, err
	}
	f.metadata, f.template = md, q.Get("template")
	switch q.Get("order") {
	case "", "desc":
	case "asc":
		f.oldestFirst = true
	default:
		return f, errdefs.InvalidArgument("invalid_order", "order %q is neither asc nor desc", q.Get("order"))
	}
	if s := q.Get("startedAfter"); s != "" {
		if f.startedAfter, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return f, errdefs.InvalidArgument("invalid_started_after", "startedAfter %q is not an RFC 3339 time", s)
		}
	}
	return f, nil
}

// metadataFilter parses the metadata filter as the SDKs send it: a query
// string k=v&…, whose keys and values the JS SDK escaped once more.
func metadataFilter(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	pairs, err := url.ParseQuery(s)
	if err != nil {
		return nil, errdefs.InvalidArgument("invalid_metadata", "the metadata filter %q is not k=v&…", s)
	}
	md := map[string]string{}
	for k, vs := range pairs {
		md[unescape(k)] = unescape(vs[len(vs)-1])
	}
	return md, nil
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// listPage lists one store page of the workspace's sandboxes that f
// keeps, and the next page's cursor.
func (g *Gateway) listPage(ctx context.Context, wsID string, page store.Page, f listFilter) ([]sandboxDetail, string, error) {
	recs, next, err := g.o.Store.ListE2BSandboxes(ctx, wsID, page, !f.oldestFirst)
	if err != nil {
		return nil, "", err
	}
	out := []sandboxDetail{}
	for _, rec := range recs {
		rt, err := g.o.Path.InWorkspace(ctx, wsID, rec.RuntimeID)
		if errdefs.IsNotFound(err) {
			continue // killed since the page was read
		}
		if err != nil {
			return nil, "", err
		}
		d, err := g.detail(ctx, rt, rec)
		if err != nil {
			return nil, "", err
		}
		if f.keeps(d) {
			out = append(out, d)
		}
	}
	return out, next, nil
}

// listFull lists up to limit sandboxes f keeps from cursor on, and the
// cursor after the last record it read ("" at the end).
func (g *Gateway) listFull(ctx context.Context, wsID, cursor string, limit int, f listFilter) ([]sandboxDetail, string, error) {
	out := []sandboxDetail{}
	for scanned := 0; len(out) < limit && scanned < maxListScan; {
		want := limit - len(out)
		ds, next, err := g.listPage(ctx, wsID, store.Page{Cursor: cursor, Limit: want}, f)
		if err != nil {
			return nil, "", err
		}
		out, cursor, scanned = append(out, ds...), next, scanned+want
		if next == "" {
			break
		}
	}
	if cursor != "" && len(out) == limit {
		// A full page has a next one only if a sandbox past it is kept,
		// as E2B answers: the SDK's hasNext is then false on the last.
		more, err := g.keptFrom(ctx, wsID, cursor, f)
		if err != nil || !more {
			return out, "", err
		}
	}
	return out, cursor, nil
}

// keptFrom reports whether f keeps a sandbox from cursor on (true, too,
// when it gave up after maxListScan records).
func (g *Gateway) keptFrom(ctx context.Context, wsID, cursor string, f listFilter) (bool, error) {
	for scanned := 0; scanned < maxListScan; scanned += maxListLimit {
		ds, next, err := g.listPage(ctx, wsID, store.Page{Cursor: cursor, Limit: maxListLimit}, f)
		if err != nil || len(ds) > 0 {
			return len(ds) > 0, err
		}
		if next == "" {
			return false, nil
		}
		cursor = next
	}
	return true, nil
}

// orderMark starts a next token: which order its cursor is good for.
func orderMark(f listFilter) string {
	if f.oldestFirst {
		return "a."
	}
	return "d."
}

// cursorOf is the store's cursor in a next token, which must be of f's
// order.
func cursorOf(token string, f listFilter) (string, error) {
	if token == "" {
		return "", nil
	}
	cursor, ok := strings.CutPrefix(token, orderMark(f))
	if !ok || cursor == "" {
		return "", errdefs.InvalidArgument("invalid_next_token", "nextToken is not one this listing (in this order) answered")
	}
	return cursor, nil
}

// listV2 is GET /v2/sandboxes: paged, all states unless state says.
func (g *Gateway) listV2(c *call) error {
	q := c.r.URL.Query()
	f, err := filterOf(q)
	if err != nil {
		return err
	}
	limit := defaultListLimit
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxListLimit {
			return errdefs.InvalidArgument("invalid_limit", "limit must be between 1 and %d", maxListLimit)
		}
	}
	cursor, err := cursorOf(q.Get("nextToken"), f)
	if err != nil {
		return err
	}
	out, next, err := g.listFull(c.ctx(), c.sc.Workspace.ID, cursor, limit, f)
	if err != nil {
		return err
	}
	if next != "" {
		c.w.Header().Set("X-Next-Token", orderMark(f)+next)
	}
	writeJSON(c.w, http.StatusOK, out)
	return nil
}

// listV1 is GET /sandboxes: the running sandboxes, unpaged.
func (g *Gateway) listV1(c *call) error {
	md, err := metadataFilter(c.r.URL.Query().Get("metadata"))
	if err != nil {
		return err
	}
	f := listFilter{states: []string{stateRunning}, metadata: md, oldestFirst: true}
	out := []sandboxDetail{}
	page := store.Page{Limit: maxListLimit}
	for read := 0; read < maxV1List; read += maxListLimit {
		ds, next, err := g.listPage(c.ctx(), c.sc.Workspace.ID, page, f)
		if err != nil {
			return err
		}
		out = append(out, ds...)
		if next == "" {
			break
		}
		page.Cursor = next
	}
	writeJSON(c.w, http.StatusOK, out)
	return nil
}
