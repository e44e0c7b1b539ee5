package shim

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/paddockhq/paddock/internal/agentauth"
)

// Where Install puts the agent and its key in DIR.
const (
	InstallBinary = "paddock-shim"
	InstallKey    = "agent.key"
)

// Install copies the running executable to dir/paddock-shim (mode 0555)
// and, when keyFrom is set, that file's agent key to dir/agent.key (mode
// 0400), for a sandbox whose image does not hold the agent: a Kubernetes
// Pod's init container runs the agent's image with dir a volume the
// sandbox's container mounts too, and the key from a Secret only the init
// container mounts. It needs nothing of the image but the binary itself
// (no cp, no shell) and works on a read-only root as any uid that may
// write dir. Each file is written under a temporary name in dir and then
// renamed, so the sandbox never sees half of one, and a second run (the
// Pod's init container again) replaces both.
func Install(dir, keyFrom string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("install: the directory to install to: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("install: %s is not a directory", dir)
	}
	var key []byte
	if keyFrom != "" {
		if key, err = readKey(keyFrom); err != nil {
			return err
		}
	}
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("install: open the agent's own executable: %w", err)
	}
	defer self.Close()
	if err := installFile(dir, InstallBinary, self, 0o555); err != nil {
		return err
	}
	if key != nil {
		if err := installFile(dir, InstallKey, bytes.NewReader(key), 0o400); err != nil {
			return err
		}
	}
	return nil
}

// readKey reads the agent key file at path, checking that it holds a key.
func readKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("install: the agent key: %w", err)
	}
	if _, err := agentauth.DecodeKey(string(bytes.TrimRight(b, "\r\n"))); err != nil {
		return nil, fmt.Errorf("install: %s holds no agent key: %w", path, err)
	}
	return b, nil
}

// installFile writes r to dir/name with mode: to a temporary file in dir,
// synced, then renamed over name.
func installFile(dir, name string, r io.Reader, mode fs.FileMode) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := io.Copy(f, r); err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	return nil
}
