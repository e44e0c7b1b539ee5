// Package sdks holds the end-to-end tests of what other languages and
// tools drive paddock with: the published e2b npm package against the
// E2B-compatible surface, the TypeScript SDK (sdk/typescript), the
// Python SDK (sdk/python) and MCP clients. Each test starts a real
// `paddock serve` on the real Docker engine (testenv.Serve) and runs the
// other language's own test runner against it, with Node.js and npm
// packages pinned exactly and Python's packages from Debian.
//
// The package has no non-test code.
package sdks
