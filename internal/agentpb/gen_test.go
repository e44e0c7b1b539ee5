package agentpb_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// protocLine is the generated header line naming protoc's version, which
// differs between distributions without changing the code.
var protocLine = regexp.MustCompile(`(?m)^//\s+protoc\s+v.*$`)

// TestGeneratedCodeUpToDate fails when scripts/gen-proto.sh would change
// the committed code. Without the generators it skips, except in CI (CI
// set), which must install them: scripts/gen-proto.sh --install.
func TestGeneratedCodeUpToDate(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		path += string(os.PathListSeparator) + filepath.Join(strings.TrimSpace(string(out)), "bin")
	}
	for _, tool := range []string{"bash", "protoc", "protoc-gen-go", "protoc-gen-connect-go"} {
		if _, err := lookPath(tool, path); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed; run scripts/gen-proto.sh --install", tool)
			}
			t.Skipf("%s is not installed (scripts/gen-proto.sh --install installs the generators)", tool)
		}
	}
	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "gen-proto.sh"), out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-proto.sh: %v\n%s", err, b)
	}
	generated := func(dir string) map[string][]byte {
		files := map[string][]byte{}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !(strings.HasSuffix(p, ".pb.go") || strings.HasSuffix(p, ".connect.go")) {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			files[rel] = protocLine.ReplaceAll(b, nil)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	fresh := generated(filepath.Join(out, "internal", "agentpb"))
	committed := generated(filepath.Join(root, "internal", "agentpb"))
	if len(fresh) == 0 {
		t.Fatal("the generator produced nothing")
	}
	for name, b := range fresh {
		c, ok := committed[name]
		switch {
		case !ok:
			t.Errorf("internal/agentpb/%s is not committed; run scripts/gen-proto.sh", name)
		case !bytes.Equal(b, c):
			t.Errorf("internal/agentpb/%s is stale; run scripts/gen-proto.sh", name)
		}
	}
	for name := range committed {
		if _, ok := fresh[name]; !ok {
			t.Errorf("internal/agentpb/%s is no longer generated; remove it", name)
		}
	}
}

func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}
