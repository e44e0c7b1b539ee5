// Package agentpbconnect holds the Connect clients and handlers generated
// from the agent protocol (api/agent/v1). See package agentpb.
package agentpbconnect
