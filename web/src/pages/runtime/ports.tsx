// The ports tab: the sandbox's TCP ports with their preview links, and
// public or private for an admin. A private port's link carries a
// preview token minted on demand. Previews live on their own origin
// (P-<id>.<preview domain>), never the console's: the console links the
// preview URL only, never the path URL, which is on the API's origin.
import { useState } from "preact/hooks";
import { api, failed, must, type ApiError, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Button, Empty, ErrorNote, useAsync } from "../../ui";
import { rtParams, type Runtime } from "./common";
import { Table } from "../../ui/table";

type Port = Schemas["Port"];

// PortsTab lists the ports (member; it reads the sandbox).
export function PortsTab({ rt }: { rt: Runtime }) {
  const { org, ws, can } = useScope();
  const list = useAsync(
    async () => (can("member") ? must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/previews", { params: { path: rtParams(org, ws, rt.id) } })).items : []),
    [org, ws, rt.id, rt.status],
  );
  if (!can("member")) return <p class="muted">Seeing a runtime's ports needs the member role.</p>;
  return (
    <>
      <p class="actions">
        <Button onClick={list.reload}>Refresh ports</Button>
      </p>
      <ErrorNote error={list.error} />
      {list.data && (list.data.length === 0 ? <Empty>Nothing listens, and no port is public.</Empty> : <PortTable rt={rt} items={list.data} onChanged={list.reload} />)}
    </>
  );
}

// PortTable is one port a row.
function PortTable({ rt, items, onChanged }: { rt: Runtime; items: Port[]; onChanged: () => void }) {
  return (
    <Table class="rt-table" label="Ports" cols={["Port", "Listening", "Process", "Public", "Preview"]}>
      {items.map((p) => (
        <tr key={p.port} data-port={p.port}>
          <td class="num">{p.port}</td>
          <td>{p.listening ? "yes" : "no"}</td>
          <td class="mono">{p.command ?? ""}</td>
          <td>
            <PublicToggle rt={rt} p={p} onChanged={onChanged} />
          </td>
          <td>
            <PreviewLink rt={rt} p={p} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

// PublicToggle marks a port public or private (admin); below admin it
// only says which.
function PublicToggle({ rt, p, onChanged }: { rt: Runtime; p: Port; onChanged: () => void }) {
  const { org, ws, can } = useScope();
  const [error, setError] = useState<ApiError | null>(null);
  if (!can("admin")) return <>{p.public ? "public" : "private"}</>;
  const id = `port-public-${p.port}`;
  const set = async (pub: boolean) => {
    setError(null);
    try {
      must(await api.PATCH("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/previews/{port}", { params: { path: { ...rtParams(org, ws, rt.id), port: p.port } }, body: { public: pub } }));
      onChanged();
    } catch (e) {
      setError(failed(e));
    }
  };
  return (
    <>
      <input type="checkbox" id={id} checked={p.public} onChange={(e) => set((e.target as HTMLInputElement).checked)} />
      <label for={id}>Port {p.port} public</label>
      <ErrorNote error={error} />
    </>
  );
}

// PreviewLink opens a port's preview in a new tab: a public port's URL
// as it is, a private one's with a fresh preview token.
function PreviewLink({ rt, p }: { rt: Runtime; p: Port }) {
  const { org, ws } = useScope();
  const [minted, setMinted] = useState<string | null>(null);
  if (p.public) {
    return (
      <a href={p.url} target="_blank" rel="noopener noreferrer">
        Open port {p.port}
      </a>
    );
  }
  const open = async () => {
    const t = must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/previews/{port}/token", { params: { path: { ...rtParams(org, ws, rt.id), port: p.port } }, body: {} }));
    setMinted(t.url);
    window.open(t.url, "_blank", "noopener,noreferrer");
  };
  return (
    <>
      <Button onClick={open}>Open port {p.port}</Button>
      {minted && (
        <a href={minted} target="_blank" rel="noopener noreferrer" class="small">
          Preview link of port {p.port} (with a token)
        </a>
      )}
    </>
  );
}
