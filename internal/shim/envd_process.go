package shim

import "connectrpc.com/connect"

// registerEnvdProcess serves envd's process.Process.
func (s *Server) registerEnvdProcess(hopts []connect.HandlerOption) {}
