package cli_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
)

type configFile struct {
	URL       string `json:"url"`
	APIKey    string `json:"api_key"`
	Org       string `json:"org"`
	Workspace string `json:"workspace"`
}

func writeConfigFile(t *testing.T, path string, c configFile) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readConfigFile(t *testing.T, path string) configFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c configFile
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("config %s: %v", b, err)
	}
	return c
}

// keyRecorder is a server that answers every request with an empty org
// list and records the key it was sent and the path.
func keyRecorder(t *testing.T) (url string, seen *[]string) {
	t.Helper()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization")+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"items":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &got
}

// TestPrecedence holds flag > environment > config file for the URL, the
// key, the org and the workspace.
func TestPrecedence(t *testing.T) {
	t.Parallel()
	fileURL, fileSeen := keyRecorder(t)
	envURL, envSeen := keyRecorder(t)
	flagURL, flagSeen := keyRecorder(t)
	home := t.TempDir()
	writeConfigFile(t, filepath.Join(home, ".config", "paddock", "config.json"),
		configFile{URL: fileURL, APIKey: "pdk_file", Org: "fileorg", Workspace: "filews"})
	xdg := t.TempDir()
	writeConfigFile(t, filepath.Join(xdg, "paddock", "config.json"),
		configFile{URL: fileURL, APIKey: "pdk_xdg", Org: "xdgorg", Workspace: "xdgws"})
	explicit := filepath.Join(t.TempDir(), "other.json")
	writeConfigFile(t, explicit, configFile{URL: fileURL, APIKey: "pdk_explicit", Org: "exorg", Workspace: "exws"})

	tests := []struct {
		name string
		env  map[string]string
		args []string
		seen *[]string
		want string
	}{
		{
			name: "config file under HOME",
			env:  map[string]string{"HOME": home},
			args: []string{"runtime", "ls"},
			seen: fileSeen, want: "Bearer pdk_file /api/v1/org/fileorg/ws/filews/runtimes",
		},
		{
			name: "XDG_CONFIG_HOME beats HOME",
			env:  map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg},
			args: []string{"runtime", "ls"},
			seen: fileSeen, want: "Bearer pdk_xdg /api/v1/org/xdgorg/ws/xdgws/runtimes",
		},
		{
			name: "--config beats the default file",
			env:  map[string]string{"HOME": home},
			args: []string{"--config", explicit, "runtime", "ls"},
			seen: fileSeen, want: "Bearer pdk_explicit /api/v1/org/exorg/ws/exws/runtimes",
		},
		{
			name: "PADDOCK_CONFIG names the file",
			env:  map[string]string{"HOME": home, "PADDOCK_CONFIG": explicit},
			args: []string{"runtime", "ls"},
			seen: fileSeen, want: "Bearer pdk_explicit /api/v1/org/exorg/ws/exws/runtimes",
		},
		{
			name: "environment beats the file",
			env: map[string]string{"HOME": home, "PADDOCK_URL": envURL, "PADDOCK_API_KEY": "pdk_env",
				"PADDOCK_ORG": "envorg", "PADDOCK_WS": "envws"},
			args: []string{"runtime", "ls"},
			seen: envSeen, want: "Bearer pdk_env /api/v1/org/envorg/ws/envws/runtimes",
		},
		{
			name: "flags beat the environment",
			env: map[string]string{"HOME": home, "PADDOCK_URL": envURL, "PADDOCK_API_KEY": "pdk_env",
				"PADDOCK_ORG": "envorg", "PADDOCK_WS": "envws"},
			args: []string{"--url", flagURL, "--api-key", "pdk_flag", "runtime", "ls", "--org", "flagorg", "--ws", "flagws"},
			seen: flagSeen, want: "Bearer pdk_flag /api/v1/org/flagorg/ws/flagws/runtimes",
		},
		{
			name: "a noun's flags may come before its verb",
			env:  map[string]string{"HOME": home},
			args: []string{"runtime", "--org", "o1", "--ws", "w1", "ls"},
			seen: fileSeen, want: "Bearer pdk_file /api/v1/org/o1/ws/w1/runtimes",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(*tt.seen)
			clitest.MustRun(t, tt.env, tt.args...)
			if len(*tt.seen) != n+1 {
				t.Fatalf("the expected server saw %d requests", len(*tt.seen)-n)
			}
			if got := (*tt.seen)[n]; got != tt.want {
				t.Fatalf("request = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		env    map[string]string
		stderr string
	}{
		{"broken file", map[string]string{"PADDOCK_CONFIG": broken}, "is not valid JSON"},
		{"missing explicit file", map[string]string{"PADDOCK_CONFIG": filepath.Join(dir, "nope.json")}, "read config file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := clitest.Run(t, tt.env, "org", "ls")
			if code != cli.ExitError || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
		})
	}
	// A missing default file is no config at all.
	_, errOut, code := clitest.Run(t, map[string]string{"HOME": dir}, "org", "ls")
	if code != cli.ExitUsage || !strings.Contains(errOut, "no API key") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// privateModes: the config file is its owner's only, and so is its
// directory.
func privateModes(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, filepath.Dir(path)} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if st.IsDir() {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Fatalf("%s mode = %v, want %v", p, st.Mode().Perm(), want)
		}
	}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	f := startAPI(t, servertest.Options{})
	url, goodKey := f.URL, f.Key
	env := clitest.Env(url, goodKey)
	clitest.MustRun(t, env, "org", "create", "acme")
	clitest.MustRun(t, env, "workspace", "create", "dev", "--org", "acme")

	home := t.TempDir()
	path := filepath.Join(home, ".config", "paddock", "config.json")
	base := map[string]string{"HOME": home}

	t.Run("a bad key writes nothing", func(t *testing.T) {
		_, errOut, code := clitest.Run(t, base, "login", "--url", url, "--api-key", "pdk_wrong")
		if code != cli.ExitError || errOut != "error: the API key is malformed, unknown, expired or revoked (invalid_api_key)\n" {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("config written: %v", err)
		}
	})
	t.Run("a good key is saved with the only org", func(t *testing.T) {
		out := clitest.MustRun(t, base, "login", "--url", url+"/", "--api-key", goodKey)
		if !strings.Contains(out, "Logged in to "+url+"; saved to "+path) || !strings.Contains(out, "Default org: acme") {
			t.Fatalf("stdout %q", out)
		}
		if got, want := readConfigFile(t, path), (configFile{URL: url, APIKey: goodKey, Org: "acme"}); got != want {
			t.Fatalf("config = %+v, want %+v", got, want)
		}
		privateModes(t, path)
	})
	t.Run("later commands need no flags", func(t *testing.T) {
		out := clitest.MustRun(t, base, "ws", "ls")
		if rows := table(out); len(rows) != 2 || rows[1][1] != "dev" {
			t.Fatalf("table %q", rows)
		}
	})
	t.Run("a missing workspace is refused", func(t *testing.T) {
		_, errOut, code := clitest.Run(t, base, "login", "--api-key", goodKey, "--ws", "nope")
		if code != cli.ExitError || !strings.Contains(errOut, "(workspace_not_found)") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("the key from stdin and a default workspace", func(t *testing.T) {
		out, errOut, code := clitest.RunInput(t, base, goodKey+"\n", "login", "--api-key-stdin", "--ws", "dev", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if got := decode[map[string]string](t, out); got["workspace"] != "dev" || got["org"] != "acme" || got["config"] != path {
			t.Fatalf("stdout %v", got)
		}
		if got, want := readConfigFile(t, path), (configFile{URL: url, APIKey: goodKey, Org: "acme", Workspace: "dev"}); got != want {
			t.Fatalf("config = %+v, want %+v", got, want)
		}
		clitest.MustRun(t, base, "project", "create", "p1")
		if got := f.body("POST /api/v1/org/{org}/ws/{ws}/projects"); got != `{"name":"p1"}` {
			t.Fatalf("body %s", got)
		}
	})
	t.Run("another server drops the old defaults", func(t *testing.T) {
		other, _ := keyRecorder(t)
		clitest.MustRun(t, base, "login", "--url", other, "--api-key", "pdk_other")
		if got, want := readConfigFile(t, path), (configFile{URL: other, APIKey: "pdk_other"}); got != want {
			t.Fatalf("config = %+v, want %+v", got, want)
		}
	})
	t.Run("nowhere to write", func(t *testing.T) {
		_, errOut, code := clitest.Run(t, nil, "login", "--url", url, "--api-key", goodKey)
		if code != cli.ExitUsage || !strings.Contains(errOut, "cannot tell where to write the config file") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

// savedConfig reads the config file as its raw fields.
func savedConfig(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
