package docker

import (
	"context"
	"errors"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// host is the machine the engine runs on, for what the provider does
// there beside the engine's API: the run directory's files (sockets, the
// agent's key, the trusted CA), the workspaces' disks, and the dial of an
// agent's socket. The provider's own host is localHost; an engine reached
// over SSH is a remoteHost (machine.go), where the same steps run as
// commands over the same connection.
type host interface {
	// exists reports whether path exists (a link is not followed).
	exists(ctx context.Context, path string) (bool, error)
	isMountPoint(ctx context.Context, dir string) (bool, error)
	// remove removes a file or an empty directory; a missing one is no
	// error.
	remove(ctx context.Context, path string) error
	removeAll(ctx context.Context, path string) error
	// mkdir makes one directory with mode 0700; it fails if it exists.
	mkdir(ctx context.Context, path string) error
	// createSparse makes a new file (never an existing one) of size bytes.
	createSparse(ctx context.Context, path string, size int64) error
	run(ctx context.Context, name string, args ...string) error
	unmount(ctx context.Context, path string, detach bool) error
	lchown(ctx context.Context, path string, uid, gid int) error
	// writeFile makes a new file (never an existing one) holding data.
	writeFile(ctx context.Context, path string, data []byte, mode os.FileMode) error
	lockRunDir(ctx context.Context, dir string) error
	unlockRunDir(ctx context.Context, dir string) error
	// dialAgent connects to dir/agent.sock; peerChecked says whether the
	// connection's peer credentials name the process that listens (a
	// local socket, opened without following links).
	dialAgent(ctx context.Context, dir string) (conn net.Conn, peerChecked bool, err error)
}

// localHost is the provider's own machine.
type localHost struct{}

func (localHost) exists(_ context.Context, path string) (bool, error) {
	_, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (localHost) isMountPoint(_ context.Context, dir string) (bool, error) {
	return isMountPoint(dir)
}

func (localHost) remove(_ context.Context, path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func (localHost) removeAll(_ context.Context, path string) error { return os.RemoveAll(path) }

func (localHost) mkdir(_ context.Context, path string) error { return os.Mkdir(path, 0o700) }

func (localHost) createSparse(_ context.Context, path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (localHost) run(ctx context.Context, name string, args ...string) error {
	return run(ctx, name, args...)
}

func (localHost) unmount(_ context.Context, path string, detach bool) error {
	flags := 0
	if detach {
		flags = unix.MNT_DETACH
	}
	return unix.Unmount(path, flags)
}

func (localHost) lchown(_ context.Context, path string, uid, gid int) error {
	return os.Lchown(path, uid, gid)
}

func (localHost) writeFile(_ context.Context, path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (localHost) lockRunDir(_ context.Context, dir string) error { return lockRunDir(dir) }

func (localHost) unlockRunDir(_ context.Context, dir string) error { return unlockRunDir(dir) }

func (localHost) dialAgent(ctx context.Context, dir string) (net.Conn, bool, error) {
	conn, err := dialSocketNoFollow(ctx, dir)
	return conn, err == nil, err
}
