package sdks

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// tsGen is sdk/typescript's gen script: the SDK's wire types come from
// api/openapi.yaml through openapi-typescript, pinned in its
// package.json, into src/schema.ts.
const tsGen = "openapi-typescript ../../api/openapi.yaml -o src/schema.ts"

// TestTypeScriptTypesUpToDate fails when `npm run gen` in sdk/typescript
// would change the committed src/schema.ts, that is when
// api/openapi.yaml changed without it: it generates the types into a
// temporary file with the pinned generator and compares.
func TestTypeScriptTypesUpToDate(t *testing.T) {
	dir := tsPackage(t)
	node := testenv.NodeBin(t)
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Scripts["gen"] != tsGen {
		t.Fatalf("sdk/typescript's gen script is %q; this test regenerates with %q: keep them one", pkg.Scripts["gen"], tsGen)
	}
	fresh := filepath.Join(t.TempDir(), "schema.ts")
	cmd := exec.CommandContext(t.Context(), filepath.Join(node, "node"), filepath.Join("node_modules", "openapi-typescript", "bin", "cli.js"),
		filepath.Join("..", "..", "api", "openapi.yaml"), "-o", fresh)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, out)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "src", "schema.ts"))
	if err != nil {
		t.Fatalf("sdk/typescript/src/schema.ts is not committed; run npm run gen there: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Error("sdk/typescript/src/schema.ts is stale; run npm run gen in sdk/typescript")
	}
}
