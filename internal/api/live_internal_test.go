package api

import (
	"context"
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/auth"
)

// TestLiveMarkCatchesEndsBeforeHold: a stream registered after its
// credential ended, by a request marked before the end, is cut at once;
// one marked after the end, or of another credential, is not; the ends
// are forgotten once no request in flight was marked before them.
func TestLiveMarkCatchesEndsBeforeHold(t *testing.T) {
	var l live
	bob, ann := auth.Identity{KeyID: "b", UserID: "bob"}, auth.Identity{KeyID: "a", UserID: "ann"}
	before, unmarkBefore := l.mark(context.Background())
	defer unmarkBefore()
	other, unmarkOther := l.mark(context.Background())
	l.endCredential("key:b")
	after, unmarkAfter := l.mark(context.Background())
	defer unmarkAfter()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		id      auth.Identity
		wantCut bool
	}{
		{"marked before the end", before, bob, true},
		{"marked after the end", after, bob, false},
		{"another credential", other, ann, false},
	} {
		ctx, h := l.hold(tc.ctx, tc.id, "acme")
		if cut := errors.Is(context.Cause(ctx), errStreamCut); cut != tc.wantCut {
			t.Errorf("%s: cut %v, want %v", tc.name, cut, tc.wantCut)
		}
		h.release()
	}
	unmarkOther()
	if len(l.ended) != 0 || len(l.marks) != 0 {
		t.Errorf("with no request in flight, live keeps %d ends and %d marks", len(l.ended), len(l.marks))
	}
}
