package preview

import (
	"fmt"
	"strconv"
	"strings"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/store"
)

// What a sandbox is told of its own preview URLs: the environment of every
// process its agent starts holds
//
//   - EnvTemplate, the preview URL of any port with PortPlaceholder in the
//     port's place (what `paddock-shim url PORT` fills in), and
//   - EnvPortPrefix+P, the preview URL of each port P its runtime declares.
//
// They are the URLs the gateway serves (Config.URL), sent with the rest of
// the injected environment on every new agent connection, so a warm
// sandbox learns them when a runtime claims it.
const (
	EnvTemplate     = "PADDOCK_PREVIEW_URL_TEMPLATE"
	EnvPortPrefix   = "PADDOCK_PREVIEW_URL_"
	PortPlaceholder = "{port}"
)

func (c Config) domain() string {
	if c.Domain == "" {
		return "localhost"
	}
	return strings.ToLower(c.Domain)
}

// template is the preview URL of runtimeID with port standing for the
// port.
func (c Config) template(runtimeID, port string) string {
	scheme := c.Scheme
	if scheme == "" {
		scheme = "http"
	}
	u := fmt.Sprintf("%s://%s-%s.%s", scheme, port, iam.ShortID(runtimeID), c.domain())
	if c.Port != "" {
		u += ":" + c.Port
	}
	return u + "/"
}

// URL is the preview URL of port on the runtime runtimeID.
func (c Config) URL(runtimeID string, port int) string {
	return c.template(runtimeID, strconv.Itoa(port))
}

// Env is the environment that tells rt's sandboxes their preview URLs.
func (c Config) Env(rt store.Runtime) map[string]string {
	env := map[string]string{EnvTemplate: c.template(rt.ID, PortPlaceholder)}
	for _, p := range rt.Config.Ports {
		env[EnvPortPrefix+strconv.Itoa(p.Port)] = c.URL(rt.ID, p.Port)
	}
	return env
}
