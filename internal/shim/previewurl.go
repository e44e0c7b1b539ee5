package shim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The sandbox's own preview URLs, as the control plane injects them into
// every process's environment (the server's internal/preview names the
// same variables; the shim imports nothing of it).
const (
	// PreviewURLTemplateEnv holds the preview URL of any port, with
	// PreviewPortPlaceholder where the port goes.
	PreviewURLTemplateEnv  = "PADDOCK_PREVIEW_URL_TEMPLATE"
	PreviewPortPlaceholder = "{port}"
)

// ErrPreviewsOff says the sandbox was told no preview URL.
var ErrPreviewsOff = errors.New("previews are off in this sandbox: " + PreviewURLTemplateEnv +
	" is not set (the control plane gives it to processes of a runtime's sandbox; a warm sandbox not yet claimed has none)")

// PreviewURL is the public URL at which the preview gateway serves port
// (a decimal 1 to 65535) of this sandbox, from getenv's
// PreviewURLTemplateEnv: `paddock-shim url PORT`.
func PreviewURL(getenv func(string) string, port string) (string, error) {
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != port {
		return "", fmt.Errorf("url: %q is not a port (1 to 65535)", port)
	}
	tmpl := getenv(PreviewURLTemplateEnv)
	if tmpl == "" {
		return "", ErrPreviewsOff
	}
	if !strings.Contains(tmpl, PreviewPortPlaceholder) {
		return "", fmt.Errorf("url: %s (%q) has no %s", PreviewURLTemplateEnv, tmpl, PreviewPortPlaceholder)
	}
	return strings.Replace(tmpl, PreviewPortPlaceholder, port, 1), nil
}
