package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/pkg/client"
)

// pager serves /api/v1/orgs from n orgs, two per page, with the cursor
// being the index of the next item; failAt makes that cursor answer 500.
func pager(t *testing.T, n int, failAt string) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := r.URL.Query().Get("cursor")
		if failAt != "" && cur == failAt {
			w.WriteHeader(500)
			return
		}
		start, _ := strconv.Atoi(cur)
		var items []string
		for i := start; i < n && i < start+2; i++ {
			items = append(items, fmt.Sprintf(`{"id":"o%d"}`, i))
		}
		next := ""
		if start+2 < n {
			next = strconv.Itoa(start + 2)
		}
		body := `{"items":[`
		for i, it := range items {
			if i > 0 {
				body += ","
			}
			body += it
		}
		fmt.Fprintf(w, `%s],"next_cursor":%q}`, body, next)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "pdk_x")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAll(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		n       int
		failAt  string
		stop    int // stop after this many items; 0 = never
		want    []string
		wantErr bool
	}{
		{name: "empty", n: 0},
		{name: "one page", n: 2, want: []string{"o0", "o1"}},
		{name: "three pages", n: 5, want: []string{"o0", "o1", "o2", "o3", "o4"}},
		{name: "early stop", n: 5, stop: 3, want: []string{"o0", "o1", "o2"}},
		{name: "error on page two", n: 5, failAt: "2", want: []string{"o0", "o1"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := pager(t, tt.n, tt.failAt)
			var got []string
			var gotErr error
			for o, err := range client.All(ctx, client.ListOptions{}, func(ctx context.Context, opts client.ListOptions) (client.List[client.Org], error) {
				return c.ListOrgs(ctx, opts)
			}) {
				if err != nil {
					gotErr = err
					continue
				}
				got = append(got, o.ID)
				if tt.stop != 0 && len(got) == tt.stop {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if (gotErr != nil) != tt.wantErr || (gotErr != nil && !errors.Is(gotErr, client.ErrInternal)) {
				t.Errorf("err = %v, want error %v", gotErr, tt.wantErr)
			}
		})
	}
}

func TestAllSandboxesKeepsTheFilter(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		if r.URL.Query().Get("cursor") == "" {
			fmt.Fprint(w, `{"items":[{"id":"a"}],"next_cursor":"c1"}`)
			return
		}
		fmt.Fprint(w, `{"items":[{"id":"b"}]}`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "pdk_x")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for sb, err := range c.AllSandboxes(context.Background(), "acme", client.SandboxFilter{State: "running", Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sb.ID)
	}
	if fmt.Sprint(ids) != "[a b]" {
		t.Fatalf("ids = %v", ids)
	}
	want := []string{"limit=1&state=running", "cursor=c1&limit=1&state=running"}
	if fmt.Sprint(queries) != fmt.Sprint(want) {
		t.Fatalf("queries = %q, want %q", queries, want)
	}
}
