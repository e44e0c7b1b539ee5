// Package agentpb holds the Go code generated from the agent protocol,
// api/agent/v1/*.proto (package paddock.agent.v1): the messages here, the
// Connect clients and handlers in agentpbconnect. Do not edit the *.pb.go
// and *.connect.go files; regenerate them with scripts/gen-proto.sh (or
// `go generate ./internal/agentpb`).
package agentpb

//go:generate bash ../../scripts/gen-proto.sh
