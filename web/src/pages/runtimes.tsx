// The workspace's runtimes, live: a table that follows the fleet's event
// stream and the answers of the actions run from it.
import { useState } from "preact/hooks";
import { api, must } from "../api/client";
import { Link } from "../router";
import { useScope } from "../session";
import { Button, Empty, ErrorNote, Field, Page, Time } from "../ui";
import { credits, nameOf, networkMode, RuntimeActions, runtimeURL, Status, type Runtime } from "./runtime/common";
import { useLiveRuntimes } from "./runtime/live";
import { Table } from "../ui/table";

// Runtimes is the workspace's runtimes page: the live table, "New project" for an admin, and "More".
export function Runtimes() {
  const { org, ws, can } = useScope();
  const live = useLiveRuntimes(org, ws);
  return (
    <Page title="Runtimes">
      {can("admin") && <NewProject onCreated={live.put} />}
      <ErrorNote error={live.error} />
      {live.loading ? (
        <p aria-live="polite">Loading…</p>
      ) : live.list.length === 0 ? (
        <Empty>No runtimes in this workspace yet.</Empty>
      ) : (
        <RuntimeTable list={live.list} onChanged={live.put} />
      )}
      {live.next && (
        <p>
          <Button onClick={live.more}>More runtimes</Button>
        </p>
      )}
    </Page>
  );
}

// RuntimeTable is the table of runtimes, one row each.
function RuntimeTable({ list, onChanged }: { list: Runtime[]; onChanged: (rt: Runtime) => void }) {
  return (
    <Table class="rt-table" label="Runtimes" cols={["Project", "Status", "Actions", "Pause reason", "Provider", "Image", "Network", "Expires", "Credits / hour"]}>
      {list.map((rt) => (
        <RuntimeRow key={rt.id} rt={rt} onChanged={onChanged} />
      ))}
    </Table>
  );
}

// RuntimeRow is one runtime's row.
function RuntimeRow({ rt, onChanged }: { rt: Runtime; onChanged: (rt: Runtime) => void }) {
  const { org, ws } = useScope();
  return (
    <tr data-runtime={rt.id} data-status={rt.status}>
      <th scope="row">
        <Link href={runtimeURL(org, ws, rt.id)}>{nameOf(rt)}</Link>
      </th>
      <td>
        <Status status={rt.status} />
        {rt.status_reason && <div class="muted small">{rt.status_reason}</div>}
      </td>
      <td>
        <RuntimeActions rt={rt} onChanged={onChanged} />
      </td>
      <td>{rt.pause_reason || <span class="muted">—</span>}</td>
      <td>{rt.config.provider || <span class="muted">—</span>}</td>
      <td class="mono">{rt.config.image || <span class="muted">—</span>}</td>
      <td>{networkMode(rt)}</td>
      <td>
        <Time at={rt.expires_at} />
      </td>
      <td class="num">{credits(rt.credits_per_hour)}</td>
    </tr>
  );
}

// NewProject makes a project, and with it its runtime (admin).
function NewProject({ onCreated }: { onCreated: (rt: Runtime) => void }) {
  const { org, ws } = useScope();
  const [name, setName] = useState("");
  const [image, setImage] = useState("");
  const create = async () => {
    const path = { org, workspace: ws };
    const body = image ? { name, runtime: { image } } : { name };
    const p = must(await api.POST("/api/v1/org/{org}/ws/{workspace}/projects", { params: { path }, body }));
    const rt = must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}", { params: { path: { ...path, runtime_id: p.runtime_id } } }));
    onCreated(rt);
    setName("");
    setImage("");
  };
  return (
    <details class="new-project">
      <summary>New project</summary>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
        }}
      >
        <Field id="new-project-name" label="Name" value={name} required pattern="[a-z0-9][a-z0-9-]{0,62}" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <Field id="new-project-image" label="Image (optional)" value={image} onInput={(e) => setImage((e.target as HTMLInputElement).value)} />
        <Button kind="primary" type="submit" disabled={!name} onClick={create}>
          Create project
        </Button>
      </form>
    </details>
  );
}
