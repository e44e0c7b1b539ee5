package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var inventoryColumns = []column[client.CapabilityVersion]{
	{"NAME", func(v client.CapabilityVersion) string { return v.Name }},
	{"VERSION", func(v client.CapabilityVersion) string { return v.Version }},
	{"DIGEST", func(v client.CapabilityVersion) string { return short(v.Digest, 19) }},
	{"SIZE", func(v client.CapabilityVersion) string { return strconv.FormatInt(v.SizeBytes, 10) }},
	{"CREATED", func(v client.CapabilityVersion) string { return tsp(v.CreatedAt) }},
	{"SHIPS", func(v client.CapabilityVersion) string { return contentsOf(v.Contents) }},
}

func (a *app) inventoryCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("inventory", "Push, list and delete the capability bundles of an org", "inv")
	scopeFlags(cmd, &sc, false)
	cmd.AddCommand(a.inventoryPushCmd(&sc), a.inventoryListCmd(&sc), a.inventoryRemoveCmd(&sc))
	return cmd
}

func (a *app) inventoryPushCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:   "push DIR",
		Short: "Upload a capability bundle to the org's inventory",
		Long: `Upload the capability bundle in DIR, the directory holding its capability.yaml,
to the org's inventory. The directory travels as a tar.gz that depends only
on its contents (names, data, executable bits), so pushing it again unchanged
is a no-op; .git, .hg and .svn directories stay behind. The server checks the
bundle and lists every problem it finds. A version once pushed is fixed:
change the version in capability.yaml to push new contents.`,
		Example: `  paddock inventory push ./capabilities/reviewer --org acme`,
		Args:    exactArgs("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var bundle bytes.Buffer
			if err := writeBundle(&bundle, args[0]); err != nil {
				return err
			}
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			v, err := s.c.PushCapability(cmd.Context(), s.org, &bundle)
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return a.printJSON(v)
			}
			_, err = fmt.Fprintf(a.env.Stdout, "%s@%s %s\n", v.Name, v.Version, v.Digest)
			return err
		},
	}
}

// errBundleTooLarge stops a bundle that grew past what the server takes.
var errBundleTooLarge = fmt.Errorf("the bundle is larger than %d MiB compressed, the most the server takes", client.MaxCapabilityBundle>>20)

// boundedBuffer is a buffer that refuses to grow past max bytes.
type boundedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (b boundedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.max {
		return 0, errBundleTooLarge
	}
	return b.buf.Write(p)
}

// vcsDirs are the version-control directories a bundle leaves behind.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

// writeBundle writes a deterministic tar.gz of the directory root's
// contents into buf: entries in lexical order, names relative to root,
// no owners or times, modes 0755 for directories and executables and 0644
// for other files. The same contents make the same bytes.
func writeBundle(buf *bytes.Buffer, root string) error {
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return usagef("%s is not a directory: push the directory holding capability.yaml", root)
	}
	zw := gzip.NewWriter(boundedBuffer{buf, client.MaxCapabilityBundle})
	tw := tar.NewWriter(zw)
	epoch := time.Unix(0, 0)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		if d.IsDir() && vcsDirs[d.Name()] {
			return filepath.SkipDir
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: epoch, Mode: 0o644}
		switch t := d.Type(); {
		case t.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
		case t&fs.ModeSymlink != 0:
			h.Typeflag = tar.TypeSymlink
			if h.Linkname, err = os.Readlink(p); err != nil {
				return err
			}
			h.Mode = 0o777
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			h.Typeflag, h.Size = tar.TypeReg, info.Size()
			if info.Mode().Perm()&0o111 != 0 {
				h.Mode = 0o755
			}
		default:
			return fmt.Errorf("%s is neither a file, a directory nor a symbolic link: it cannot go into a bundle", p)
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.CopyN(tw, f, h.Size); err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if errors.Is(err, errBundleTooLarge) {
		return errBundleTooLarge
	}
	return err
}

func (a *app) inventoryListCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "ls [NAME]",
		Aliases: []string{"list"},
		Short:   "List the capability versions in the org's inventory",
		Long:    "List the capability versions in the org's inventory: all of them, or those of NAME.",
		Args:    rangeArgs(0, 1, "at most one capability NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			vs, err := s.c.ListInventory(cmd.Context(), s.org, name)
			if err != nil {
				return err
			}
			return printList(a, client.List[client.CapabilityVersion]{Items: vs}, inventoryColumns)
		},
	}
}

func (a *app) inventoryRemoveCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME@VERSION",
		Aliases: []string{"delete"},
		Short:   "Delete a capability version from the org's inventory",
		Long:    "Delete a capability version from the org's inventory. A version a runtime's binding pins cannot be deleted until the binding moves or goes.",
		Args:    exactArgs("NAME@VERSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, version, err := nameVersion(args[0], true)
			if err != nil {
				return err
			}
			s, err := a.orgSession(sc)
			if err != nil {
				return err
			}
			if err := s.c.DeleteCapabilityVersion(cmd.Context(), s.org, name, version); err != nil {
				return err
			}
			if a.output == outputTable {
				fmt.Fprintf(a.env.Stdout, "deleted capability %s@%s\n", name, version)
			}
			return nil
		},
	}
}
