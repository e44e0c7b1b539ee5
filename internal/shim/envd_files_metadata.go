package shim

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// A file's metadata (envd ≥ 0.6.2): string pairs an upload sets from its
// X-Metadata-<key> headers, kept as the file's extended attributes
// user.e2b.<key>, and answered in its EntryInfo. Each upload replaces
// them all; one without such headers clears them.
const (
	metadataHeaderPrefix = "X-Metadata-"
	metadataXattrPrefix  = "user.e2b."
	// maxMetadataKey is what the kernel's 255-byte attribute names leave.
	maxMetadataKey = 255 - len(metadataXattrPrefix)
	// maxMetadataTotal bounds the names and values of one file's metadata
	// together: ext4 keeps them in one 4 KiB block.
	maxMetadataTotal = 4096
)

// uploadMetadata returns the metadata h's X-Metadata-* headers set (keys
// lowercased; of a repeated header, the first value), or why it is
// refused.
func uploadMetadata(h http.Header) (map[string]string, error) {
	var md map[string]string
	for name, values := range h {
		if len(name) <= len(metadataHeaderPrefix) || !strings.EqualFold(name[:len(metadataHeaderPrefix)], metadataHeaderPrefix) || len(values) == 0 {
			continue
		}
		key := strings.ToLower(name[len(metadataHeaderPrefix):])
		if md == nil {
			md = map[string]string{}
		}
		if _, ok := md[key]; !ok {
			md[key] = values[0]
		}
	}
	total := 0
	for k, v := range md {
		if len(k) > maxMetadataKey {
			return nil, errInvalid("invalid_metadata", "metadata key %q exceeds %d bytes", k, maxMetadataKey)
		}
		if !printableASCII(k) || !printableASCII(v) {
			return nil, errInvalid("invalid_metadata", "metadata %q: keys and values must be printable US-ASCII", k)
		}
		total += len(metadataXattrPrefix) + len(k) + len(v)
	}
	if total > maxMetadataTotal {
		return nil, errInvalid("invalid_metadata", "total metadata size %d exceeds %d bytes", total, maxMetadataTotal)
	}
	return md, nil
}

func printableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// setMetadata makes md the metadata of the open file f, removing what it
// had besides. A file system without extended attributes can hold none:
// clearing succeeds there, setting fails.
func setMetadata(f *os.File, md map[string]string) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	err = rc.Control(func(fd uintptr) {
		names, err := xattrNames(func(b []byte) (int, error) { return unix.Flistxattr(int(fd), b) })
		if err != nil {
			if len(md) > 0 || !errors.Is(err, unix.ENOTSUP) {
				opErr = err
			}
			return
		}
		for _, n := range names {
			key, ok := strings.CutPrefix(n, metadataXattrPrefix)
			if _, keep := md[key]; ok && !keep {
				if err := unix.Fremovexattr(int(fd), n); err != nil && !errors.Is(err, unix.ENODATA) {
					opErr = err
					return
				}
			}
		}
		for k, v := range md {
			if err := unix.Fsetxattr(int(fd), metadataXattrPrefix+k, []byte(v), 0); err != nil {
				opErr = err
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return opErr
}

// fileMetadata returns the metadata of the file at path (through a link),
// or nil: none, or none it may read.
func fileMetadata(path string) map[string]string {
	names, err := xattrNames(func(b []byte) (int, error) { return unix.Listxattr(path, b) })
	if err != nil {
		return nil
	}
	var md map[string]string
	for _, n := range names {
		key, ok := strings.CutPrefix(n, metadataXattrPrefix)
		if !ok || !utf8.ValidString(key) {
			continue
		}
		v, err := xattrValue(path, n)
		if err != nil || !utf8.Valid(v) {
			continue
		}
		if md == nil {
			md = map[string]string{}
		}
		md[key] = string(v)
	}
	return md
}

// xattrNames lists attribute names with list, which fills b (or, given
// none, says how much it needs).
func xattrNames(list func([]byte) (int, error)) ([]string, error) {
	for {
		n, err := list(nil)
		if err != nil || n == 0 {
			return nil, err
		}
		b := make([]byte, n)
		n, err = list(b)
		if errors.Is(err, unix.ERANGE) {
			continue // grew meanwhile
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, s := range strings.Split(string(b[:n]), "\x00") {
			if s != "" {
				names = append(names, s)
			}
		}
		return names, nil
	}
}

func xattrValue(path, name string) ([]byte, error) {
	for {
		n, err := unix.Getxattr(path, name, nil)
		if err != nil {
			return nil, err
		}
		b := make([]byte, n)
		n, err = unix.Getxattr(path, name, b)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return b[:n], nil
	}
}
