package e2b

import "net/http"

// newEnvd is envd, forwarded to the sandbox's agent.
func (g *Gateway) newEnvd() http.Handler {
	return http.NotFoundHandler()
}
