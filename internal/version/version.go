// Package version holds paddock's version, set at link time with
// -ldflags "-X github.com/paddockhq/paddock/internal/version.Version=…".
package version

// Version is the running build's version.
var Version = "0.1.0-dev"
