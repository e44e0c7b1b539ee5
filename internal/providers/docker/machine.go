package docker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/agentauth"
)

// Machine is an engine's host that the provider reaches from afar (the
// ssh provider's machine): Config.Machine. The engine's API and every
// agent's socket are dialled through it, and what the provider does on
// its own host runs there as commands instead:
//
//   - the run directory is a plain directory there (no tmpfs of its own:
//     sandboxes see its path), holding the shim's copy, uploaded once per
//     version, and each sandbox's socket directory;
//   - the agent's key and the trusted CA are written there, and each
//     sandbox's directory is locked and unlocked as on a local host, so
//     the account must be root (or own what those steps change);
//   - workspace disks are ext4 images loop-mounted there, so the
//     account needs mkfs.ext4 and mount;
//   - an agent is told apart by its key alone (no peer credentials cross
//     the connection), as under gVisor.
type Machine interface {
	// Run runs argv there, with stdin as its input (nil: none), and
	// returns its standard output; a failure carries its standard error.
	Run(ctx context.Context, stdin []byte, argv ...string) ([]byte, error)
	// DialUnix connects to a unix socket there.
	DialUnix(ctx context.Context, path string) (net.Conn, error)
}

// remoteHost does a host's steps on a Machine.
type remoteHost struct{ m Machine }

func (r remoteHost) sh(ctx context.Context, stdin []byte, script string, args ...string) ([]byte, error) {
	return r.m.Run(ctx, stdin, append([]string{"sh", "-c", script, "sh"}, args...)...)
}

func (r remoteHost) exists(ctx context.Context, path string) (bool, error) {
	out, err := r.sh(ctx, nil, `if [ -e "$1" ] || [ -L "$1" ]; then echo yes; else echo no; fi`, path)
	return strings.TrimSpace(string(out)) == "yes", err
}

func (r remoteHost) isMountPoint(ctx context.Context, dir string) (bool, error) {
	out, err := r.sh(ctx, nil, `if [ ! -e "$1" ]; then echo no; elif mountpoint -q "$1"; then echo yes; else echo no; fi`, dir)
	return strings.TrimSpace(string(out)) == "yes", err
}

func (r remoteHost) remove(ctx context.Context, path string) error {
	_, err := r.sh(ctx, nil, `if [ -d "$1" ] && [ ! -L "$1" ]; then rmdir "$1"; else rm -f "$1"; fi`, path)
	return err
}

func (r remoteHost) removeAll(ctx context.Context, path string) error {
	_, err := r.m.Run(ctx, nil, "rm", "-rf", "--", path)
	return err
}

func (r remoteHost) mkdir(ctx context.Context, path string) error {
	_, err := r.m.Run(ctx, nil, "mkdir", "-m", "0700", "--", path)
	return err
}

func (r remoteHost) createSparse(ctx context.Context, path string, size int64) error {
	_, err := r.sh(ctx, nil, `set -C && : >"$1" && chmod 0600 "$1" && truncate -s "$2" "$1"`, path, strconv.FormatInt(size, 10))
	return err
}

func (r remoteHost) run(ctx context.Context, name string, args ...string) error {
	_, err := r.m.Run(ctx, nil, append([]string{name}, args...)...)
	return err
}

func (r remoteHost) unmount(ctx context.Context, path string, detach bool) error {
	argv := []string{"umount"}
	if detach {
		argv = append(argv, "-l")
	}
	_, err := r.m.Run(ctx, nil, append(argv, "--", path)...)
	return err
}

func (r remoteHost) lchown(ctx context.Context, path string, uid, gid int) error {
	_, err := r.m.Run(ctx, nil, "chown", "-h", fmt.Sprintf("%d:%d", uid, gid), "--", path)
	return err
}

func (r remoteHost) writeFile(ctx context.Context, path string, data []byte, mode os.FileMode) error {
	_, err := r.sh(ctx, data, `umask 077 && set -C && cat >"$1" && chmod "$2" "$1"`, path, strconv.FormatUint(uint64(mode.Perm()), 8))
	return err
}

// lockRunDir is lockRunDir (identity.go) there.
func (r remoteHost) lockRunDir(ctx context.Context, dir string) error {
	owner := strconv.Itoa(lockedOwner)
	_, err := r.sh(ctx, nil, `set -e; rm -f "$1/$2"; find "$1" -mindepth 1 -maxdepth 1 -type f -exec chown -h "$3:$3" {} +; chown -h "$3:$3" "$1"; chmod 0555 "$1"`,
		dir, agentauth.KeyFileName, owner)
	return err
}

// unlockRunDir is unlockRunDir (identity.go) there.
func (r remoteHost) unlockRunDir(ctx context.Context, dir string) error {
	_, err := r.sh(ctx, nil, `set -e; chmod 0700 "$1"; find "$1" -mindepth 1 -maxdepth 1 -exec rm -rf {} +; chown -h 0:0 "$1"; chmod 0777 "$1"`, dir)
	return err
}

func (r remoteHost) dialAgent(ctx context.Context, dir string) (net.Conn, bool, error) {
	conn, err := r.m.DialUnix(ctx, filepath.Join(dir, socketName))
	return conn, false, err
}

// prepareRemoteRunDir makes the run directory on m and puts the shim
// there, once per version (paddock-shim-<hash of its content>), and
// returns the copy's path there.
func prepareRemoteRunDir(ctx context.Context, m Machine, runDir, shim string) (string, error) {
	b, err := os.ReadFile(shim)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	dst := filepath.Join(runDir, "paddock-shim-"+hex.EncodeToString(sum[:])[:16])
	r := remoteHost{m}
	if _, err := r.sh(ctx, nil, `umask 077 && mkdir -p "$1" && chmod 0700 "$1"`, runDir); err != nil {
		return "", err
	}
	if ok, err := r.exists(ctx, dst); err != nil || ok {
		return dst, err
	}
	// A name of its own: two servers sharing the machine may upload at once.
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(runDir, ".shim-upload-"+hex.EncodeToString(rnd[:]))
	_, err = r.sh(ctx, b, `rm -f "$1" && cat >"$1" && chmod 0555 "$1" && mv -f "$1" "$2"`, tmp, dst)
	return dst, err
}

// UploadShim makes the run directory on m and puts the shim there once
// per version, as a Machine's provider does, and returns the copy's path
// there: the ssh provider's bare mode runs that copy on the machine
// itself.
func UploadShim(ctx context.Context, m Machine, runDir, shim string) (string, error) {
	return prepareRemoteRunDir(ctx, m, runDir, shim)
}
