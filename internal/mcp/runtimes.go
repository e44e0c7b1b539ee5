package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/pkg/client"
)

// Runtime is a runtime as the tools show it.
type Runtime struct {
	ID           string `json:"id" jsonschema:"the runtime's id"`
	Project      string `json:"project,omitempty" jsonschema:"its project's name"`
	ProjectID    string `json:"project_id" jsonschema:"its project's id"`
	Status       string `json:"status" jsonschema:"idle, starting, running, paused, archived or error"`
	StatusReason string `json:"status_reason,omitempty" jsonschema:"why it is in error, when it is"`
	PauseReason  string `json:"pause_reason,omitempty" jsonschema:"why it was paused, when it is"`
	Image        string `json:"image,omitempty" jsonschema:"its sandbox image"`
	CPUMillis    int64  `json:"cpu_millis,omitempty" jsonschema:"CPU, in thousandths of a core"`
	MemoryMB     int64  `json:"memory_mb,omitempty" jsonschema:"memory, in MiB"`
	ExpiresAt    string `json:"expires_at,omitempty" jsonschema:"when it will be paused unless used, RFC 3339"`
}

func runtimeOut(rt client.Runtime) Runtime {
	out := Runtime{ID: rt.ID, Project: rt.ProjectName, ProjectID: rt.ProjectID, Status: rt.Status,
		StatusReason: rt.StatusReason, PauseReason: rt.PauseReason, Image: rt.Config.Image,
		CPUMillis: rt.Config.CPUMillis, MemoryMB: rt.Config.MemoryMB}
	if rt.ExpiresAt != nil {
		out.ExpiresAt = rt.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return out
}

// ListRuntimesInput pages the runtimes of a workspace.
type ListRuntimesInput struct {
	Where
	Cursor string `json:"cursor,omitempty" jsonschema:"a previous answer's next_cursor, for the next page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many runtimes at most; default: the server's page size"`
}

// RuntimeList is one page of runtimes.
type RuntimeList struct {
	Runtimes   []Runtime `json:"runtimes"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last"`
}

// CreateRuntimeInput makes a project and its runtime.
type CreateRuntimeInput struct {
	Where
	Name        string `json:"name" jsonschema:"the project's name: lowercase letters, digits and dashes"`
	Description string `json:"description,omitempty" jsonschema:"what the project is for"`
	Image       string `json:"image,omitempty" jsonschema:"the sandbox image; default: the server's"`
	CPUMillis   int64  `json:"cpu_millis,omitempty" jsonschema:"CPU in thousandths of a core (1000 = one core); default: the server's"`
	MemoryMB    int64  `json:"memory_mb,omitempty" jsonschema:"memory in MiB; default: the server's"`
	DiskMB      int64  `json:"disk_mb,omitempty" jsonschema:"the workspace disk's quota in MiB; default: the server's"`
	Start       bool   `json:"start,omitempty" jsonschema:"start it at once (as start_runtime); a runtime that cannot start is not kept"`
}

// Deleted says what delete_runtime tore down.
type Deleted struct {
	RuntimeID string `json:"runtime_id"`
	ProjectID string `json:"project_id"`
	Deleted   bool   `json:"deleted"`
}

func (t *tools) addRuntimeTools(s *sdk.Server) {
	add(s, "list_runtimes", "List runtimes",
		"List the runtimes of a workspace, with their status (idle, starting, running, paused, archived, error).",
		readOnly, t.listRuntimes)
	add(s, "create_runtime", "Create a runtime",
		"Create a project and its runtime in a workspace, with an image and resources; with start, start it too. Needs the admin role.",
		additive, t.createRuntime)
	add(s, "start_runtime", "Start a runtime",
		"Start an idle or archived runtime: a fresh sandbox (an archived one restored). Answers once it runs.",
		additive, t.action(t.start))
	add(s, "pause_runtime", "Pause a runtime",
		"Pause a running runtime: its processes freeze and its compute stops being billed; any operation in it wakes it.",
		idempotent, t.action(t.c.PauseRuntime))
	add(s, "resume_runtime", "Resume a runtime",
		"Resume a paused or archived runtime.",
		idempotent, t.action(t.c.ResumeRuntime))
	add(s, "delete_runtime", "Delete a runtime",
		"Tear a runtime down for good: its sandbox is killed and its project, with its workspace disk, deleted. Needs the admin role.",
		destructive, t.deleteRuntime)
}

func (t *tools) listRuntimes(ctx context.Context, in ListRuntimesInput) (RuntimeList, error) {
	org, ws, err := t.where(in.Where)
	if err != nil {
		return RuntimeList{}, err
	}
	page, err := t.c.ListRuntimes(ctx, org, ws, client.ListOptions{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return RuntimeList{}, err
	}
	out := RuntimeList{Runtimes: make([]Runtime, 0, len(page.Items)), NextCursor: page.NextCursor}
	for _, rt := range page.Items {
		out.Runtimes = append(out.Runtimes, runtimeOut(rt))
	}
	return out, nil
}

// createRuntime creates the project; with Start it starts its runtime,
// and deletes the project again when that fails, so that nothing is
// left half made.
func (t *tools) createRuntime(ctx context.Context, in CreateRuntimeInput) (out Runtime, retErr error) {
	org, ws, err := t.where(in.Where)
	if err != nil {
		return Runtime{}, err
	}
	req := client.CreateProjectRequest{Name: in.Name, Description: in.Description}
	if in.Image != "" || in.CPUMillis != 0 || in.MemoryMB != 0 || in.DiskMB != 0 {
		req.Runtime = &client.RuntimeConfig{Image: in.Image, CPUMillis: in.CPUMillis, MemoryMB: in.MemoryMB, DiskMB: in.DiskMB}
	}
	p, err := t.c.CreateProject(ctx, org, ws, req)
	if err != nil {
		return Runtime{}, err
	}
	if !in.Start {
		rt, err := t.c.GetRuntime(ctx, org, ws, p.RuntimeID)
		return runtimeOut(rt), err
	}
	defer func() {
		if retErr != nil {
			_ = t.c.DeleteProject(context.WithoutCancel(ctx), org, ws, p.ID)
		}
	}()
	rt, err := t.c.StartRuntime(ctx, org, ws, p.RuntimeID, client.StartRuntimeRequest{})
	return runtimeOut(rt), err
}

// action is a tool that acts on one runtime and answers it.
func (t *tools) action(act func(ctx context.Context, org, ws, id string) (client.Runtime, error)) func(context.Context, Target) (Runtime, error) {
	return func(ctx context.Context, in Target) (Runtime, error) {
		org, ws, id, err := t.runtime(ctx, in)
		if err != nil {
			return Runtime{}, err
		}
		rt, err := act(ctx, org, ws, id)
		if err != nil {
			return Runtime{}, err
		}
		return runtimeOut(rt), nil
	}
}

// start starts a runtime with no secrets beyond its own.
func (t *tools) start(ctx context.Context, org, ws, id string) (client.Runtime, error) {
	return t.c.StartRuntime(ctx, org, ws, id, client.StartRuntimeRequest{})
}

// deleteRuntime deletes the runtime's project, which resets the runtime
// first (the API's DELETE …/projects/{project}).
func (t *tools) deleteRuntime(ctx context.Context, in Target) (Deleted, error) {
	org, ws, id, err := t.runtime(ctx, in)
	if err != nil {
		return Deleted{}, err
	}
	rt, err := t.c.GetRuntime(ctx, org, ws, id)
	if err != nil {
		return Deleted{}, err
	}
	if err := t.c.DeleteProject(ctx, org, ws, rt.ProjectID); err != nil {
		return Deleted{}, err
	}
	return Deleted{RuntimeID: rt.ID, ProjectID: rt.ProjectID, Deleted: true}, nil
}
