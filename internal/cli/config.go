package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock/internal/version"
	"github.com/paddockhq/paddock/pkg/client"
)

// defaultURL is where `paddock serve` listens by default.
const defaultURL = "http://127.0.0.1:8080"

// fileConfig is the CLI's config file, written by `paddock login`. It
// holds one credential: an API key, or the session token of a wallet
// sign-in (`paddock login --wallet-key-file`); a login saves one and drops
// the other.
type fileConfig struct {
	URL          string `json:"url,omitempty"`
	APIKey       string `json:"api_key,omitempty"`
	SessionToken string `json:"session_token,omitempty"`
	Org          string `json:"org,omitempty"`
	Workspace    string `json:"workspace,omitempty"`
}

// credential is the config's credential: its API key, else its session
// token.
func (c *fileConfig) credential() string { return first(c.APIKey, c.SessionToken) }

func (a *app) getenv(key string) string {
	v, _ := a.env.LookupEnv(key)
	return v
}

// first returns the first non-empty value.
func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// configFile returns the config file's path and whether it was named
// explicitly (by --config or PADDOCK_CONFIG). The default is
// $XDG_CONFIG_HOME/paddock/config.json, else ~/.config/paddock/config.json;
// "" when neither variable is set.
func (a *app) configFile() (string, bool) {
	if p := first(a.configPath, a.getenv("PADDOCK_CONFIG")); p != "" {
		return p, true
	}
	if dir := a.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "paddock", "config.json"), false
	}
	if home := a.getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "paddock", "config.json"), false
	}
	return "", false
}

// config loads the config file once. A missing default file is an empty
// config; a missing file named explicitly is an error.
func (a *app) config() (*fileConfig, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	cfg, err := a.readConfig(false)
	if err != nil {
		return nil, err
	}
	a.cfg = cfg
	return cfg, nil
}

func (a *app) readConfig(missingOK bool) (*fileConfig, error) {
	path, explicit := a.configFile()
	cfg := &fileConfig{}
	if path == "" {
		return cfg, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && (!explicit || missingOK) {
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	if err := json.Unmarshal(b, cfg); err != nil {
		return nil, fmt.Errorf("config file %s is not valid JSON: %w", path, err)
	}
	return cfg, nil
}

// writeConfig replaces the config file atomically, readable by its owner
// only, and returns its path.
func (a *app) writeConfig(cfg *fileConfig) (string, error) {
	path, _ := a.configFile()
	if path == "" {
		return "", usagef("cannot tell where to write the config file: set --config, PADDOCK_CONFIG, XDG_CONFIG_HOME or HOME")
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create config directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".config-*.json")
	if err != nil {
		return "", fmt.Errorf("write config file: %w", err)
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }() // a no-op once renamed
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("write config file: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("write config file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write config file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write config file: %w", err)
	}
	a.cfg = cfg
	return path, nil
}

// serverURL resolves the server URL: flag, environment, config file,
// default. It never fails; a broken config file is reported elsewhere.
func (a *app) serverURL() string {
	var fromFile string
	if cfg, err := a.config(); err == nil {
		fromFile = cfg.URL
	}
	return first(a.url, a.getenv("PADDOCK_URL"), fromFile, defaultURL)
}

// client returns an SDK client for the resolved URL and credential:
// --api-key, PADDOCK_API_KEY, then the config file's API key or session
// token. Either flag or variable may also hold a session token.
func (a *app) client() (*client.Client, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	url := a.serverURL()
	saved := cfg.credential()
	if saved != "" && cfg.URL != "" && strings.TrimRight(url, "/") != strings.TrimRight(cfg.URL, "/") {
		// The saved credential is for the server it was saved with; it is
		// never sent anywhere else.
		saved = ""
	}
	key := first(a.apiKey, a.getenv("PADDOCK_API_KEY"), saved)
	if key == "" {
		if cfg.credential() != "" {
			return nil, usagef("the saved credential is for %s, not %s: run 'paddock login --url %s', set PADDOCK_API_KEY or pass --api-key", cfg.URL, url, url)
		}
		return nil, usagef("no API key or session: run 'paddock login', set PADDOCK_API_KEY or pass --api-key")
	}
	return a.newClient(url, key)
}

func (a *app) newClient(url, key string) (*client.Client, error) {
	c, err := client.New(url, key,
		client.WithHTTPClient(&http.Client{}),
		client.WithUserAgent("paddock-cli/"+version.Version))
	if err != nil {
		return nil, usagef("%v", err)
	}
	return c, nil
}

// scope holds the --org and --ws flags of a noun.
type scope struct {
	org, ws string
}

// orgName resolves the org: --org, PADDOCK_ORG, config file.
func (a *app) orgName(s *scope) (string, error) {
	cfg, err := a.config()
	if err != nil {
		return "", err
	}
	org := first(s.org, a.getenv("PADDOCK_ORG"), cfg.Org)
	if org == "" {
		return "", usagef("no org: pass --org, set PADDOCK_ORG or run 'paddock login --org'")
	}
	return org, nil
}

// orgAndWorkspace resolves the org and the workspace: --ws, PADDOCK_WS,
// config file.
func (a *app) orgAndWorkspace(s *scope) (string, string, error) {
	org, err := a.orgName(s)
	if err != nil {
		return "", "", err
	}
	ws := first(s.ws, a.getenv("PADDOCK_WS"), a.cfg.Workspace)
	if ws == "" {
		return "", "", usagef("no workspace: pass --ws, set PADDOCK_WS or run 'paddock login --ws'")
	}
	return org, ws, nil
}

// session is what a command resolved before it calls the server: a
// client, and the org and workspace when the command acts in them.
type session struct {
	c       *client.Client
	org, ws string
}

// orgSession resolves the org, then a client.
func (a *app) orgSession(sc *scope) (session, error) {
	org, err := a.orgName(sc)
	if err != nil {
		return session{}, err
	}
	c, err := a.client()
	if err != nil {
		return session{}, err
	}
	return session{c: c, org: org}, nil
}

// workspaceSession resolves the org and the workspace, then a client.
func (a *app) workspaceSession(sc *scope) (session, error) {
	org, ws, err := a.orgAndWorkspace(sc)
	if err != nil {
		return session{}, err
	}
	c, err := a.client()
	if err != nil {
		return session{}, err
	}
	return session{c: c, org: org, ws: ws}, nil
}
