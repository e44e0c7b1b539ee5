package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/pkg/client"
)

// Host is a machine of the org as the tools show it (never its key).
type Host struct {
	Name         string  `json:"name"`
	Address      string  `json:"address" jsonschema:"sshd's host:port"`
	User         string  `json:"user"`
	Mode         string  `json:"mode" jsonschema:"container or bare"`
	HostKey      string  `json:"host_key" jsonschema:"the pinned host key"`
	Provider     string  `json:"provider" jsonschema:"the provider name its runtimes' configurations hold; the org may name the machine by its name instead"`
	State        string  `json:"state" jsonschema:"ready, or torn_down after its idle teardown"`
	IdleTeardown int64   `json:"idle_teardown_seconds,omitempty"`
	CostPerHour  float64 `json:"cost_per_hour,omitempty" jsonschema:"credits each sandbox on it is billed per hour"`
}

func hostOut(h client.Host) Host {
	return Host{Name: h.Name, Address: h.Address, User: h.User, Mode: h.Mode, HostKey: h.HostKey, Provider: h.Provider,
		State: h.State, IdleTeardown: h.IdleTeardownSeconds, CostPerHour: h.CostPerHour}
}

// InOrg names the org a tool acts in.
type InOrg struct {
	Org string `json:"org,omitempty" jsonschema:"the org's name; default: the server's default org"`
}

// AddHostInput registers a machine.
type AddHostInput struct {
	InOrg
	Name            string  `json:"name" jsonschema:"the machine's name in the org: lowercase letters, digits and dashes"`
	Address         string  `json:"address" jsonschema:"sshd's host or host:port"`
	User            string  `json:"user" jsonschema:"the account to log in as"`
	PrivateKey      string  `json:"private_key" jsonschema:"the private key to log in with (OpenSSH's format, unencrypted); kept sealed, never shown again"`
	HostKey         string  `json:"host_key" jsonschema:"the machine's host key, pinned, as authorized_keys writes it"`
	Mode            string  `json:"mode,omitempty" jsonschema:"container (default): its Docker engine runs the sandboxes; bare: sshd only, logged in as root, no container isolation"`
	DockerSocket    string  `json:"docker_socket,omitempty" jsonschema:"the engine's socket on the machine; default /var/run/docker.sock"`
	RunDir          string  `json:"run_dir,omitempty" jsonschema:"paddock's directory on the machine; default /run/paddock"`
	DiskDir         string  `json:"disk_dir,omitempty" jsonschema:"the workspace disks' directory on the machine; default /var/lib/paddock/disks"`
	IdleTeardown    string  `json:"idle_teardown,omitempty" jsonschema:"tear it down after this long with no sandbox running (30m, 2h); default never"`
	TeardownCommand string  `json:"teardown_command,omitempty" jsonschema:"a shell command run on it when it is torn down"`
	CostPerHour     float64 `json:"cost_per_hour,omitempty" jsonschema:"credits each sandbox on it is billed per hour, in place of the resource rate"`
}

// HostRef names a machine of the org.
type HostRef struct {
	InOrg
	Name string `json:"name" jsonschema:"the machine's name in the org"`
}

// HostList is the org's machines.
type HostList struct {
	Hosts      []Host `json:"hosts"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last"`
}

// ListHostsInput pages the org's machines.
type ListHostsInput struct {
	InOrg
	Cursor string `json:"cursor,omitempty" jsonschema:"a previous answer's next_cursor, for the next page"`
}

// Removed says which machine remove_host removed.
type Removed struct {
	Name    string `json:"name"`
	Removed bool   `json:"removed"`
}

func (t *tools) addHostTools(s *sdk.Server) {
	add(s, "add_host", "Add a machine",
		"Register a machine reachable over SSH with Docker for the org: its runtimes may then run there (their provider: the machine's name). The server checks the host key and the login first. Needs the member role.",
		additive, t.addHost)
	add(s, "list_hosts", "List machines",
		"List the org's machines, with their state.",
		readOnly, t.listHosts)
	add(s, "remove_host", "Remove a machine",
		"Remove a machine of the org: one you added, or any for an admin; refused while a sandbox is on it.",
		destructive, t.removeHost)
}

func (t *tools) org(o InOrg) (string, error) {
	org := first(o.Org, t.o.Org)
	if org == "" {
		return "", errorf("missing_org", "name the org (the org argument): this server has no default org")
	}
	return org, nil
}

func (t *tools) addHost(ctx context.Context, in AddHostInput) (Host, error) {
	org, err := t.org(in.InOrg)
	if err != nil {
		return Host{}, err
	}
	h, err := t.c.AddHost(ctx, org, client.AddHostRequest{
		Name: in.Name, Address: in.Address, User: in.User, PrivateKey: in.PrivateKey, HostKey: in.HostKey,
		Mode: in.Mode, DockerSocket: in.DockerSocket, RunDir: in.RunDir, DiskDir: in.DiskDir,
		IdleTeardown: in.IdleTeardown, TeardownCommand: in.TeardownCommand, CostPerHour: in.CostPerHour,
	})
	if err != nil {
		return Host{}, err
	}
	return hostOut(h), nil
}

func (t *tools) listHosts(ctx context.Context, in ListHostsInput) (HostList, error) {
	org, err := t.org(in.InOrg)
	if err != nil {
		return HostList{}, err
	}
	page, err := t.c.ListHosts(ctx, org, client.ListOptions{Cursor: in.Cursor})
	if err != nil {
		return HostList{}, err
	}
	out := HostList{Hosts: make([]Host, 0, len(page.Items)), NextCursor: page.NextCursor}
	for _, h := range page.Items {
		out.Hosts = append(out.Hosts, hostOut(h))
	}
	return out, nil
}

func (t *tools) removeHost(ctx context.Context, in HostRef) (Removed, error) {
	org, err := t.org(in.InOrg)
	if err != nil {
		return Removed{}, err
	}
	if err := t.c.RemoveHost(ctx, org, in.Name); err != nil {
		return Removed{}, err
	}
	return Removed{Name: in.Name, Removed: true}, nil
}
