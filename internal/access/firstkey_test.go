package access_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestFirstKey: an installation without keys gets its first admin key,
// the configured one or a random one, made at the service's clock; once
// a key exists, nothing more is made.
func TestFirstKey(t *testing.T) {
	at := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, configured := range []string{"", "pdk_" + strings.Repeat("0a", 24)} {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "paddock.db"), slog.New(slog.DiscardHandler))
		must(t, err)
		t.Cleanup(func() { st.Close() })
		svc := iam.New(iam.Config{Store: st, Now: func() time.Time { return at }})
		plain, made, err := svc.FirstKey(t.Context(), configured)
		if err != nil || !made || plain == "" || configured != "" && plain != configured {
			t.Fatalf("first key (configured %q): %q made %v, %v", configured, plain, made, err)
		}
		p, err := svc.Authenticate(t.Context(), plain)
		if err != nil || !p.Installation {
			t.Fatalf("the first key is not an installation admin's: %+v, %v", p, err)
		}
		keys, _, err := st.ListAPIKeys(t.Context(), store.APIKeyFilter{Installation: true}, store.Page{})
		if err != nil || len(keys) != 1 || !keys[0].CreatedAt.Equal(at) {
			t.Fatalf("keys %+v, %v: want one, made at the service's clock %v", keys, err, at)
		}
		if again, made, err := svc.FirstKey(t.Context(), ""); err != nil || made || again != "" {
			t.Fatalf("a second first key: %q made %v, %v", again, made, err)
		}
	}
}
