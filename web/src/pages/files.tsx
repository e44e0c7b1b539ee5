// The files tab of a runtime's page: browse a directory of its sandbox,
// upload by drag and drop or with a file picker (each with its progress),
// download, make a directory, delete. The directory shown is in the URL
// (?path=), so a reload or a shared link opens the same one.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api/client";
import { Link, useLocation } from "../router";
import { useScope } from "../session";
import { Button, Empty, ErrorNote, Field, Time, useAsync } from "../ui";
import { ActionForm, value } from "../ui/form";
import { Table } from "../ui/table";
import { formatBytes, join, Uploads } from "./files-upload";

type FileInfo = Schemas["FileInfo"];

// home is where browsing starts: the runtime's persistent workspace.
const home = "/workspace";

// crumbs are the directories from / down to path.
function crumbs(path: string): { name: string; path: string }[] {
  const parts = path.split("/").filter(Boolean);
  return [{ name: "/", path: "/" }, ...parts.map((p, i) => ({ name: p, path: "/" + parts.slice(0, i + 1).join("/") }))];
}

// Files shows the files tab to members; a viewer sees why it cannot.
export function Files({ runtime }: { runtime: string }) {
  const { can } = useScope();
  if (!can("member")) {
    return <p class="note">Files in a sandbox are open to the org's members: your role here is viewer.</p>;
  }
  return <Browser runtime={runtime} />;
}

// Browser lists one directory and holds the controls that change it.
function Browser({ runtime }: { runtime: string }) {
  const { org, ws } = useScope();
  const { path: page, query } = useLocation();
  const dir = query.get("path") || home;
  const at = (p: string) => page + "?path=" + encodeURIComponent(p);
  const params = { org, workspace: ws, runtime_id: runtime };
  const list = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/files/list", { params: { path: params, query: { path: dir } } }));
    const items = [...l.items].sort((a, b) => Number(b.type === "directory") - Number(a.type === "directory") || a.name.localeCompare(b.name));
    return { items, truncated: l.truncated };
  }, [org, ws, runtime, dir]);
  const base = `/api/v1/org/${encodeURIComponent(org)}/ws/${encodeURIComponent(ws)}/runtimes/${encodeURIComponent(runtime)}/files`;
  return (
    <div class="files">
      <Breadcrumbs dir={dir} at={at} />
      <div class="files-tools">
        <MakeDir dir={dir} params={params} onDone={list.reload} />
        <Uploads dir={dir} base={base} onDone={list.reload} />
      </div>
      <ErrorNote error={list.error} />
      {list.data && (
        <FileTable dir={dir} items={list.data.items} base={base} params={params} at={at} onChange={list.reload} />
      )}
      {list.data?.truncated && <p class="muted">The directory has more entries than are shown.</p>}
      {list.loading && !list.data && <p aria-live="polite">Loading…</p>}
      {dir !== home && (
        <p>
          <Link class="btn btn-plain" href={at(home)}>
            Back to {home}
          </Link>
        </p>
      )}
    </div>
  );
}

// Breadcrumbs name every directory above the one shown, each a link.
function Breadcrumbs({ dir, at }: { dir: string; at: (p: string) => string }) {
  const cs = crumbs(dir);
  return (
    <nav aria-label="Directory" class="crumbs">
      <ol>
        {cs.map((c, i) => (
          <li>
            {i === cs.length - 1 ? (
              <span aria-current="location">{c.name}</span>
            ) : (
              <Link href={at(c.path)}>{c.name}</Link>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}

type Params = { org: string; workspace: string; runtime_id: string };

// FileTable lists a directory's entries with their actions.
function FileTable(props: { dir: string; items: FileInfo[]; base: string; params: Params; at: (p: string) => string; onChange: () => void }) {
  const { dir, items } = props;
  return (
    <Table
      label="Files"
      caption={dir}
      cols={["Name", "Type", "Size", "Modified", "Actions"]}
      after={items.length === 0 && <Empty>The directory is empty.</Empty>}
    >
      {items.map((f) => (
        <FileRow f={f} {...props} />
      ))}
    </Table>
  );
}

// FileRow is one entry: a directory's name enters it; download and delete.
function FileRow({ f, dir, base, params, at, onChange }: { f: FileInfo; dir: string; base: string; params: Params; at: (p: string) => string; onChange: () => void }) {
  const path = f.path || join(dir, f.name);
  const isDir = f.type === "directory";
  const remove = async () => {
    must(
      await api.DELETE("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/files", {
        params: { path: params, query: { path, recursive: isDir } },
      }),
    );
    onChange();
  };
  return (
    <tr data-name={f.name}>
      <th scope="row" class="mono rowhead">
        {isDir ? <Link href={at(path)}>{f.name}/</Link> : f.name}
        {f.symlink_target && <span class="muted"> → {f.symlink_target}</span>}
      </th>
      <td>{f.type}</td>
      <td>{isDir ? "—" : formatBytes(f.size)}</td>
      <td>
        <Time at={f.modified_at} />
      </td>
      <td class="row-actions">
        <a
          class="btn btn-plain"
          href={base + (isDir ? "/tar" : "") + "?path=" + encodeURIComponent(path)}
          download={isDir ? f.name + ".tar" : f.name}
          aria-label={"Download " + f.name + (isDir ? " as a tar archive" : "")}
        >
          Download
        </a>
        <Button kind="danger" aria-label={"Delete " + f.name} confirm={isDir ? `Delete ${path} and everything in it?` : `Delete ${path}?`} onClick={remove}>
          Delete
        </Button>
      </td>
    </tr>
  );
}

// MakeDir makes a directory (with its parents) under the one shown.
function MakeDir({ dir, params, onDone }: { dir: string; params: Params; onDone: () => void }) {
  const [name, setName] = useState("");
  const submit = async () => {
    const n = name.trim();
    if (!n) return;
    const path = n.startsWith("/") ? n : join(dir, n);
    must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/files/mkdir", { params: { path: params }, body: { path, parents: true } }));
    setName("");
    onDone();
  };
  return (
    <ActionForm class="inline mkdir" plain submit="Make directory" onSubmit={submit}>
      <Field label="New directory" id="mkdir-name" value={name} required onInput={(e) => setName(value(e))} />
    </ActionForm>
  );
}
