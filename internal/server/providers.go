package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/providers/fake"
)

// registerProviders registers the configured provider and returns how to
// release it.
func registerProviders(ctx context.Context, reg *provider.Registry, cfg config.Config, instance string, logger *slog.Logger) (func(), error) {
	switch cfg.Provider {
	case "fake":
		reg.Register(fake.New(fake.Config{}))
		return func() {}, nil
	case "docker":
		shim, err := findShim(cfg.ShimPath)
		if err != nil {
			return nil, err
		}
		p, err := docker.New(docker.Config{
			Host:        cfg.DockerHost,
			Instance:    instance,
			ShimPath:    shim,
			RunDir:      runDir(cfg),
			DiskDir:     filepath.Join(cfg.DataDir, "disks"),
			PullMissing: cfg.PullImages,
			Networks:    dockerNetworks(cfg),

			WritableRootUnbounded: cfg.WritableRootUnbounded,
		}, logger.With("provider", "docker"))
		if err != nil {
			return nil, fmt.Errorf("docker provider: %w", err)
		}
		reg.Register(p)
		return func() { _ = p.Close() }, nil
	}
	return nil, fmt.Errorf("unknown provider %q", cfg.Provider)
}

// findShim locates the static paddock-shim binary: the configured path, else
// next to this executable, else on PATH.
func findShim(configured string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", fmt.Errorf("shim binary: %w", err)
		}
		return filepath.Abs(configured)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "paddock-shim")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("paddock-shim"); err == nil {
		return filepath.Abs(p)
	}
	return "", errors.New("paddock-shim not found: build it next to paddock (see README) or set --shim-path")
}

// runDir is where agent sockets live. Unix socket paths are limited to 107
// bytes, so a deep data dir falls back to a short directory under /tmp
// named after it.
func runDir(cfg config.Config) string {
	if cfg.RunDir != "" {
		return cfg.RunDir
	}
	d := filepath.Join(cfg.DataDir, "run")
	if len(d) <= 60 {
		return d
	}
	sum := sha256.Sum256([]byte(cfg.DataDir))
	return filepath.Join(os.TempDir(), "paddock-"+hex.EncodeToString(sum[:6]))
}

// dockerNetworks are the egress networks of the docker provider; nil when
// egress is disabled.
func dockerNetworks(cfg config.Config) *docker.Networks {
	if cfg.Egress.Disabled {
		return nil
	}
	return &docker.Networks{Proxy: cfg.Egress.ProxyNetwork, Open: cfg.Egress.OpenNetwork, ProxyPort: cfg.Egress.ProxyPort}
}
