// Uploads into a sandbox's directory: a drop zone and a file picker, each
// file sent with XMLHttpRequest (fetch reports no upload progress) as the
// body of PUT …/files?path=, one after another, each with a <progress>.
import { useState } from "preact/hooks";
import { csrfHeaders } from "../api/client";

// join puts name under dir.
export function join(dir: string, name: string): string {
  return (dir.endsWith("/") ? dir : dir + "/") + name;
}

type Upload = {
  id: number;
  name: string;
  path: string;
  loaded: number;
  total: number;
  state: "waiting" | "sending" | "done" | "failed";
  error?: string;
};

// formatBytes is n bytes for people: 1.5 MiB.
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return (i === 0 ? String(v) : v.toFixed(v < 10 ? 1 : 0)) + " " + units[i];
}

// send PUTs file to url, telling progress as bytes go; it resolves when
// the server answered 2xx and rejects with the API's error message.
export function send(url: string, file: File, progress: (loaded: number, total: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.withCredentials = true;
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
    for (const [k, v] of Object.entries(csrfHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => progress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let msg = xhr.statusText || "upload failed";
      try {
        const body = JSON.parse(xhr.responseText) as { code?: string; message?: string };
        msg = (body.message ?? msg) + (body.code ? ` (${body.code})` : "");
      } catch {
        // not the API's JSON error: keep the status text
      }
      reject(new Error(`${xhr.status}: ${msg}`));
    };
    xhr.onerror = () => reject(new Error("the upload was cut off (network error)"));
    xhr.onabort = () => reject(new Error("the upload was stopped"));
    xhr.send(file);
  });
}

let nextID = 1;

// Uploads is the drop zone, the picker and the progress of each upload
// into dir; onDone runs after each file lands.
export function Uploads({ dir, base, onDone }: { dir: string; base: string; onDone: () => void }) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [over, setOver] = useState(false);
  const update = (id: number, u: Partial<Upload>) => setUploads((us) => us.map((x) => (x.id === id ? { ...x, ...u } : x)));
  const start = async (files: File[]) => {
    const batch = files.map((f) => ({ id: nextID++, name: f.name, path: join(dir, f.name), loaded: 0, total: f.size, state: "waiting" as const, file: f }));
    setUploads((us) => [...us.filter((u) => u.state !== "done"), ...batch.map(({ file: _, ...u }) => u)]);
    for (const b of batch) {
      update(b.id, { state: "sending" });
      try {
        await send(base + "?path=" + encodeURIComponent(b.path), b.file, (loaded, total) => update(b.id, { loaded, total }));
        update(b.id, { state: "done", loaded: b.file.size });
        onDone();
      } catch (e) {
        update(b.id, { state: "failed", error: e instanceof Error ? e.message : String(e) });
      }
    }
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    const files = Array.from(e.dataTransfer?.files ?? []);
    if (files.length) start(files);
  };
  return (
    <div
      class={"dropzone" + (over ? " over" : "")}
      onDragEnter={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragOver={(e) => {
        e.preventDefault();
        if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
        setOver(true);
      }}
      onDragLeave={(e) => {
        if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) setOver(false);
      }}
      onDrop={onDrop}
    >
      <p>Drop files here to upload them to {dir}, or</p>
      <label for="file-upload">Upload files</label>{" "}
      <input
        type="file"
        id="file-upload"
        multiple
        onChange={(e) => {
          const el = e.target as HTMLInputElement;
          const files = Array.from(el.files ?? []);
          el.value = "";
          if (files.length) start(files);
        }}
      />
      {uploads.length > 0 && <UploadList uploads={uploads} />}
    </div>
  );
}

// UploadList is each upload's progress; the live text changes in steps of
// ten percent, so a screen reader is told without being flooded.
function UploadList({ uploads }: { uploads: Upload[] }) {
  return (
    <ul class="uploads">
      {uploads.map((u) => {
        const pct = u.total > 0 ? Math.floor((u.loaded / u.total) * 100) : u.state === "done" ? 100 : 0;
        const said =
          u.state === "done" ? "uploaded" : u.state === "failed" ? "failed: " + u.error : u.state === "waiting" ? "waiting" : `${Math.floor(pct / 10) * 10}%`;
        return (
          <li class={"upload upload-" + u.state} data-upload={u.name}>
            <span class="mono" title={u.path}>
              {u.path}
            </span>{" "}
            <progress id={"upload-" + u.id} max={u.total || 1} value={u.state === "done" ? u.total || 1 : u.loaded} aria-label={"Uploading " + u.name} />{" "}
            <span class="muted">
              {formatBytes(u.loaded)} of {formatBytes(u.total)} ({pct}%)
            </span>{" "}
            <span aria-live="polite" class={u.state === "failed" ? "error" : ""}>
              {u.name}: {said}
            </span>
          </li>
        );
      })}
    </ul>
  );
}
