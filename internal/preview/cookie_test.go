package preview

import (
	"net/http"
	"slices"
	"testing"
)

// TestDropSetCookies: every Set-Cookie line a browser would read as
// setting paddock's cookies goes (RFC 6265: the name trimmed of spaces
// and tabs, the line cut at a control character, a nameless cookie sent
// back as its value, which reads as name=value), in any case; the app's
// own stay as written.
func TestDropSetCookies(t *testing.T) {
	h := http.Header{}
	for _, l := range []string{
		"paddock_preview=x",
		"paddock_preview =x; Path=/",
		"paddock_preview\t=x",
		"  \tpaddock_preview_p\t = x",
		"Paddock_Preview=x",
		"paddock_preview",
		"paddock_preview; Path=/",
		"paddock_preview\x00junk=x",
		// A nameless cookie goes back as its value, which reads as a
		// cookie named before its first '='.
		"=paddock_preview=planted",
		" = paddock_preview_p=x; Path=/",
		"\t=\tPADDOCK_PREVIEW =x",
		"app=1; Path=/",
		"app_two =2",
		"paddock_preview_x=3",
		"x=paddock_preview",
		"=app_three=3",
	} {
		h.Add("Set-Cookie", l)
	}
	dropSetCookies(h, cookieName, cookiePartitioned)
	if got, want := h.Values("Set-Cookie"), []string{"app=1; Path=/", "app_two =2", "paddock_preview_x=3", "x=paddock_preview", "=app_three=3"}; !slices.Equal(got, want) {
		t.Fatalf("kept %q, want %q", got, want)
	}
}
