package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/pkg/client"
)

var snapshotColumns = []column[client.Snapshot]{
	{"ID", func(s client.Snapshot) string { return s.ID }},
	{"NAME", func(s client.Snapshot) string { return s.Name }},
	{"RUNTIME", func(s client.Snapshot) string { return s.RuntimeID }},
	{"PROVIDER", func(s client.Snapshot) string { return s.Provider }},
	{"IMAGE", func(s client.Snapshot) string { return s.Image }},
	{"SIZE", func(s client.Snapshot) string { return strconv.FormatInt(s.SizeBytes, 10) }},
	{"WHERE", func(s client.Snapshot) string { return s.Destination }},
	{"CREATED", func(s client.Snapshot) string { return ts(s.CreatedAt) }},
}

const snapshotArg = "SNAPSHOT is a snapshot's name or id in the workspace."

func (a *app) snapshotCmd() *cobra.Command {
	var sc scope
	cmd := groupCmd("snapshot", "Take, list, restore and delete snapshots of runtimes")
	scopeFlags(cmd, &sc, true)
	cmd.AddCommand(a.snapshotCreateCmd(&sc), a.snapshotListCmd(&sc), a.snapshotRemoveCmd(&sc), a.snapshotRestoreCmd(&sc))
	return cmd
}

func (a *app) snapshotCreateCmd(sc *scope) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "create RUNTIME",
		Short: "Take a snapshot of a runtime's workspace and configuration",
		Long: `Take a snapshot of a runtime: its workspace files (everything under
/workspace) and its configuration, kept as one artifact (under the server's
data directory, or in its S3 bucket) and billed by size while it exists. A
paused runtime is woken; its processes are stopped while the workspace is
copied. ` + runtimeArg,
		Args: exactArgs("RUNTIME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := a.target(ctx, sc, args[0])
			if err != nil {
				return err
			}
			s, err := t.c.CreateSnapshot(ctx, t.org, t.ws, t.rid, client.CreateSnapshotRequest{Name: name})
			if err != nil {
				return err
			}
			fields := make([]field, 0, len(snapshotColumns))
			for _, c := range snapshotColumns {
				fields = append(fields, field{c.name, c.value(s)})
			}
			return a.printObject(s, fields)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the snapshot's name, unique in the workspace (default snap-<UTC time>)")
	return cmd
}

func (a *app) snapshotListCmd(sc *scope) *cobra.Command {
	var page client.ListOptions
	cmd := &cobra.Command{
		Use:     "ls [RUNTIME]",
		Aliases: []string{"list"},
		Short:   "List the workspace's snapshots, or one runtime's",
		Long:    "List snapshots, oldest first: the workspace's, or those of RUNTIME. " + runtimeArg,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(args) == 1 {
				t, err := a.target(ctx, sc, args[0])
				if err != nil {
					return err
				}
				l, err := t.c.ListRuntimeSnapshots(ctx, t.org, t.ws, t.rid, page)
				if err != nil {
					return err
				}
				return printList(a, l, snapshotColumns)
			}
			s, err := a.workspaceSession(sc)
			if err != nil {
				return err
			}
			l, err := s.c.ListSnapshots(ctx, s.org, s.ws, page)
			if err != nil {
				return err
			}
			return printList(a, l, snapshotColumns)
		},
	}
	pageFlags(cmd, &page)
	return cmd
}

func (a *app) snapshotRemoveCmd(sc *scope) *cobra.Command {
	return &cobra.Command{
		Use:     "rm SNAPSHOT",
		Aliases: []string{"delete"},
		Short:   "Delete a snapshot and its artifact",
		Long:    "Delete a snapshot: its artifact, then its record; its storage is billed no longer. " + snapshotArg,
		Args:    exactArgs("SNAPSHOT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, id, err := a.snapshotRef(ctx, sc, args[0])
			if err != nil {
				return err
			}
			if err := s.c.DeleteSnapshot(ctx, s.org, s.ws, id); err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.env.Stdout, "deleted snapshot %s\n", args[0])
			return err
		},
	}
}

func (a *app) snapshotRestoreCmd(sc *scope) *cobra.Command {
	var into, project, providerName string
	cmd := &cobra.Command{
		Use:   "restore SNAPSHOT (--into RUNTIME | --project NAME [--provider P])",
		Short: "Restore a snapshot into a runtime or a new project",
		Long: `Restore a snapshot. --into RUNTIME replaces that runtime's workspace with
the snapshot's: a runtime with a sandbox is reset first (its processes end),
then started and filled; it keeps its own configuration. --project NAME
creates a project with the snapshot's configuration (on --provider when
given), starts it and fills its workspace. It prints the runtime, running.
` + snapshotArg,
		Args: exactArgs("SNAPSHOT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, id, err := a.snapshotRef(ctx, sc, args[0])
			if err != nil {
				return err
			}
			req := client.RestoreSnapshotRequest{ProjectName: project, Provider: providerName}
			if into != "" {
				if req.RuntimeID, err = a.runtimeID(ctx, s.c, s.org, s.ws, into); err != nil {
					return err
				}
			}
			res, err := s.c.RestoreSnapshot(ctx, s.org, s.ws, id, req)
			if err != nil {
				return err
			}
			return a.printRuntime(res.Runtime)
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "restore into this runtime, replacing its workspace")
	cmd.Flags().StringVar(&project, "project", "", "restore into a new project of this name")
	cmd.Flags().StringVar(&providerName, "provider", "", "with --project: the new runtime's provider (default the snapshot's)")
	cmd.MarkFlagsMutuallyExclusive("into", "project")
	cmd.MarkFlagsOneRequired("into", "project")
	return cmd
}

// snapshotRef resolves the scope and a SNAPSHOT argument, a name or an id,
// to the snapshot's id.
func (a *app) snapshotRef(ctx context.Context, sc *scope, arg string) (session, string, error) {
	s, err := a.workspaceSession(sc)
	if err != nil || isUUID(arg) {
		return s, arg, err
	}
	page := client.ListOptions{Limit: 500}
	for {
		l, err := s.c.ListSnapshots(ctx, s.org, s.ws, page)
		if err != nil {
			return s, "", err
		}
		for _, snap := range l.Items {
			if snap.Name == arg {
				return s, snap.ID, nil
			}
		}
		if l.NextCursor == "" {
			return s, "", fmt.Errorf("no snapshot named %q in workspace %s", arg, s.ws)
		}
		page.Cursor = l.NextCursor
	}
}
