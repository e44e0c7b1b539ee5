package shim

import "connectrpc.com/connect"

// EnvdVersion is the envd version the agent speaks: the e2b SDKs gate
// features on it (the REST API answers it as envdVersion, and GET /health
// and the answers' headers carry it).
const EnvdVersion = "0.6.4"

// registerEnvd serves envd, the in-sandbox API the e2b SDKs call, on the
// agent's link beside paddock's own services: GET /health, GET and POST
// /files (envd_files.go), and the Connect services process.Process
// (envd_process.go) and filesystem.Filesystem (envd_filesystem.go). The
// control plane forwards to it only what an e2b client may call
// (internal/e2b), after authorizing it.
func (s *Server) registerEnvd(hopts []connect.HandlerOption) {
	s.registerEnvdProcess(hopts)
	s.registerEnvdFilesystem(hopts)
}
