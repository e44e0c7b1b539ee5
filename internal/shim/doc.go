// Package shim implements paddock's in-sandbox agent: the process that runs
// as PID 1 in every sandbox, reaps orphaned processes, forwards termination
// signals, and serves the agent RPC protocol (process execution, files and
// terminals) over a single stream-oriented listener such as a unix socket.
//
// The package imports nothing of the control plane: only the standard
// library, golang.org/x/sys, github.com/creack/pty, Connect/protobuf and the
// generated agent protocol code. cmd/paddock-shim is its thin entry point.
package shim
