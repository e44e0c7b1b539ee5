// Package config is the server's configuration: defaults, a YAML file,
// environment variables and flags, applied in that order (a flag beats the
// environment, which beats the file, which beats the default).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

var instanceRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// Config is what `paddock serve` runs with.
type Config struct {
	Listen       string        `yaml:"listen"`        // PADDOCK_LISTEN
	DataDir      string        `yaml:"data_dir"`      // PADDOCK_DATA_DIR
	Provider     string        `yaml:"provider"`      // PADDOCK_PROVIDER: docker | fake
	ShimPath     string        `yaml:"shim_path"`     // PADDOCK_SHIM_PATH
	DefaultImage string        `yaml:"default_image"` // PADDOCK_DEFAULT_IMAGE
	DockerHost   string        `yaml:"docker_host"`   // PADDOCK_DOCKER_HOST (else DOCKER_HOST)
	RunDir       string        `yaml:"run_dir"`       // PADDOCK_RUN_DIR: agent socket dirs
	BootstrapKey string        `yaml:"bootstrap_key"` // PADDOCK_BOOTSTRAP_KEY: first admin key
	LogLevel     string        `yaml:"log_level"`     // PADDOCK_LOG_LEVEL: debug | info | warn | error
	IdleTimeout  time.Duration `yaml:"idle_timeout"`  // PADDOCK_IDLE_TIMEOUT
	PullImages   bool          `yaml:"pull_images"`   // PADDOCK_PULL_IMAGES: pull missing images
	// InstanceID names the installation on its first start (it labels all
	// compute); "" means a random UUID. Later starts keep the stored one.
	InstanceID string `yaml:"instance_id"` // PADDOCK_INSTANCE_ID
}

// Default is the configuration with nothing set.
func Default() Config {
	return Config{
		Listen:       "127.0.0.1:8080",
		DataDir:      "./data",
		Provider:     "docker",
		DefaultImage: "paddock/debian:bookworm",
		LogLevel:     "info",
		IdleTimeout:  15 * time.Minute,
		PullImages:   true,
	}
}

// LoadFile applies a YAML file over c. A missing file is an error only when
// required.
func (c *Config) LoadFile(path string, required bool) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// LoadEnv applies PADDOCK_* variables over c, read through lookup.
func (c *Config) LoadEnv(lookup func(string) (string, bool)) error {
	str := map[string]*string{
		"PADDOCK_LISTEN":        &c.Listen,
		"PADDOCK_DATA_DIR":      &c.DataDir,
		"PADDOCK_PROVIDER":      &c.Provider,
		"PADDOCK_SHIM_PATH":     &c.ShimPath,
		"PADDOCK_DEFAULT_IMAGE": &c.DefaultImage,
		"PADDOCK_DOCKER_HOST":   &c.DockerHost,
		"PADDOCK_RUN_DIR":       &c.RunDir,
		"PADDOCK_BOOTSTRAP_KEY": &c.BootstrapKey,
		"PADDOCK_LOG_LEVEL":     &c.LogLevel,
		"PADDOCK_INSTANCE_ID":   &c.InstanceID,
	}
	for k, p := range str {
		if v, ok := lookup(k); ok && v != "" {
			*p = v
		}
	}
	if v, ok := lookup("PADDOCK_IDLE_TIMEOUT"); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_IDLE_TIMEOUT: %w", err)
		}
		c.IdleTimeout = d
	}
	if v, ok := lookup("PADDOCK_PULL_IMAGES"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("PADDOCK_PULL_IMAGES: %w", err)
		}
		c.PullImages = b
	}
	return nil
}

// Validate checks c and makes paths absolute.
func (c *Config) Validate() error {
	if c.Listen == "" {
		return errors.New("listen address is empty")
	}
	if c.DataDir == "" {
		return errors.New("data dir is empty")
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	c.DataDir = abs
	switch c.Provider {
	case "docker", "fake":
	default:
		return fmt.Errorf("provider %q is not one of docker, fake", c.Provider)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log level %q is not one of debug, info, warn, error", c.LogLevel)
	}
	if c.InstanceID != "" && !instanceRE.MatchString(c.InstanceID) {
		return fmt.Errorf("instance id %q must be 1 to 128 letters, digits, '.', '_' or '-'", c.InstanceID)
	}
	if c.IdleTimeout < 10*time.Second {
		return fmt.Errorf("idle timeout %s is shorter than 10s", c.IdleTimeout)
	}
	return nil
}
