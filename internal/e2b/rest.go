package e2b

import "net/http"

// newREST is the control-plane REST API.
func (g *Gateway) newREST() http.Handler {
	return http.NotFoundHandler()
}
