package cli_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTalksOnlyThroughTheSDK holds the CLI's boundary: apart from serve.go
// (serve, which runs the server itself, and admin, which works on its data
// directory) and admin_*.go (more admin commands), the CLI reaches the server only through
// pkg/client, so no command may import a server package. The one other
// internal package allowed is internal/auth/wallet, a leaf with no server
// in it, which signs a wallet sign-in's challenge (wallet.go), and
// internal/mcp, the MCP tools `paddock mcp` serves, which reach the
// server only through pkg/client too (its own test holds it to that).
// moby's patternmatcher, a leaf, reads a build context's .dockerignore.
// golang.org/x/crypto/ssh reads a known_hosts file for `host add`
// (host.go).
// Tests may use whatever they need.
func TestTalksOnlyThroughTheSDK(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{
		"github.com/paddockhq/paddock/pkg/client":           true,
		"github.com/paddockhq/paddock/internal/version":     true,
		"github.com/paddockhq/paddock/internal/cli":         true,
		"github.com/paddockhq/paddock/internal/cli/clitest": true,
		"github.com/paddockhq/paddock/internal/auth/wallet": true,
		"github.com/paddockhq/paddock/internal/mcp":         true,
		"github.com/spf13/cobra":                            true,
		"github.com/spf13/pflag":                            true,
		"golang.org/x/term":                                 true,
		"gopkg.in/yaml.v3":                                  true, // workflow files; a parser, no server code
		// .dockerignore's patterns, as Docker reads them (template build).
		"github.com/moby/patternmatcher":            true,
		"github.com/moby/patternmatcher/ignorefile": true,
		"golang.org/x/crypto/ssh":                   true,
		"golang.org/x/crypto/ssh/knownhosts":        true,
	}
	for _, dir := range []string{".", "clitest"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if name := filepath.Base(file); name == "serve.go" || strings.HasPrefix(name, "admin_") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
					continue // the standard library
				}
				if !allowed[p] {
					t.Errorf("%s imports %s", file, p)
				}
			}
		}
	}
}
