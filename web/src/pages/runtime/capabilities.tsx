// The capabilities tab: a runtime's capability bindings with their
// status, the output of their setup scripts and checks, and their
// workers; the merged set they resolve to; install, enable, disable and
// remove for an admin.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Button, Empty, ErrorNote, Field, Time, useAsync } from "../../ui";
import { rtParams, type Runtime } from "./common";

type Binding = Schemas["CapabilityBinding"];
type Step = Schemas["StepResult"];
type Worker = Schemas["WorkerStatus"];

// CapabilitiesTab lists the runtime's bindings and their resolved set.
export function CapabilitiesTab({ rt }: { rt: Runtime }) {
  const { org, ws, can } = useScope();
  const path = rtParams(org, ws, rt.id);
  const list = useAsync(async () => must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/capabilities", { params: { path } })).items, [org, ws, rt.id]);
  return (
    <>
      {can("admin") && <Install rt={rt} onDone={list.reload} />}
      <h2>Bindings</h2>
      <p class="actions">
        <Button onClick={list.reload}>Refresh capabilities</Button>
      </p>
      <ErrorNote error={list.error} />
      {list.data === undefined ? null : list.data.length === 0 ? (
        <Empty>No capabilities are installed on this runtime.</Empty>
      ) : (
        list.data.map((b) => <BindingCard key={b.id} b={b} rt={rt} onChanged={list.reload} />)
      )}
      <Resolved rt={rt} bindings={list.data} />
    </>
  );
}

// Install installs a capability by name (and version).
function Install({ rt, onDone }: { rt: Runtime; onDone: () => void }) {
  const { org, ws } = useScope();
  const [name, setName] = useState("");
  const [version, setVersion] = useState("");
  const install = async () => {
    const body = { name, enabled: true, ...(version ? { version } : {}) };
    must(await api.POST("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/capabilities", { params: { path: rtParams(org, ws, rt.id) }, body }));
    setName("");
    setVersion("");
    onDone();
  };
  return (
    <form class="inline" aria-label="Install a capability" onSubmit={(e) => e.preventDefault()}>
      <Field id="cap-name" label="Capability" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      <Field id="cap-version" label="Version (optional)" value={version} onInput={(e) => setVersion((e.target as HTMLInputElement).value)} />
      <Button kind="primary" type="submit" disabled={!name} onClick={install}>
        Install
      </Button>
    </form>
  );
}

// BindingCard is one binding: what it is, how its last application went,
// and (for an admin) its switches.
function BindingCard({ b, rt, onChanged }: { b: Binding; rt: Runtime; onChanged: () => void }) {
  const { org, ws, can } = useScope();
  const path = { ...rtParams(org, ws, rt.id), binding_id: b.id };
  const toggle = async () => {
    must(await api.PATCH("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/capabilities/{binding_id}", { params: { path }, body: { enabled: !b.enabled } }));
    onChanged();
  };
  const remove = async () => {
    must(await api.DELETE("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/capabilities/{binding_id}", { params: { path } }));
    onChanged();
  };
  const s = b.status;
  return (
    <section class="card binding" data-binding={b.name} aria-labelledby={"binding-" + b.id}>
      <h3 id={"binding-" + b.id}>
        {b.name} <span class="muted">{b.version} · {b.source}{b.enabled ? "" : " · disabled"}</span>
      </h3>
      <p>
        Status: <span class={"status status-" + (s?.state === "applied" ? "running" : s?.state === "failed" ? "error" : "idle")}>{s?.state ?? "pending"}</span>
        {s?.applied_at && (
          <>
            {" "}at <Time at={s.applied_at} />
          </>
        )}
      </p>
      {s?.error && <p class="error">{s.error}</p>}
      <Steps title="Setup" steps={s?.setup ?? []} />
      <Steps title="Checks" steps={s?.checks ?? []} />
      <Workers workers={s?.workers ?? []} />
      {can("admin") && (
        <p class="actions">
          <Button onClick={toggle}>{(b.enabled ? "Disable " : "Enable ") + b.name}</Button>
          <Button kind="danger" confirm={`Remove ${b.name} from this runtime?`} onClick={remove}>
            {"Remove " + b.name}
          </Button>
        </p>
      )}
    </section>
  );
}

// Steps are the runs of setup scripts or checks, each with its output.
function Steps({ title, steps }: { title: string; steps: Step[] }) {
  if (!steps.length) return null;
  return (
    <>
      <h4>{title}</h4>
      <ul class="steps">
        {steps.map((st) => (
          <li>
            <span class={st.ok ? "status-running" : "status-error"}>{st.ok ? "ok" : "failed"}</span> {st.name} (exit {st.exit_code}, {st.duration_ms} ms)
            {st.output && (
              <details>
                <summary>Output of {st.name}</summary>
                <pre>{st.output}</pre>
              </details>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

// Workers are a binding's worker processes and how they are.
function Workers({ workers }: { workers: Worker[] }) {
  if (!workers.length) return null;
  return (
    <>
      <h4>Workers</h4>
      <ul class="steps">
        {workers.map((w) => (
          <li>
            {w.name}: <span class={w.state === "running" ? "status-running" : "status-error"}>{w.state}</span>
            {w.process_id && <span class="muted"> · process {w.process_id}</span>}
            {w.exit_code !== undefined && <span class="muted"> · exit {w.exit_code}</span>}
            {w.output && (
              <details>
                <summary>Output of {w.name}</summary>
                <pre>{w.output}</pre>
              </details>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

// Resolved is the merged set of the enabled bindings, by kind.
function Resolved({ rt, bindings }: { rt: Runtime; bindings?: Binding[] }) {
  const { org, ws } = useScope();
  const r = useAsync(async () => must(await api.GET("/api/v1/org/{org}/ws/{workspace}/runtimes/{runtime_id}/capabilities/resolved", { params: { path: rtParams(org, ws, rt.id) } })), [org, ws, rt.id, bindings]);
  if (r.error) return <ErrorNote error={r.error} />;
  if (!r.data) return null;
  const d = r.data;
  const names = (l: { name: string }[]) => (l.length ? l.map((i) => i.name).join(", ") : undefined);
  const kinds: [string, { name: string }[]][] = [
    ["Agents", d.agents],
    ["Skills", d.skills],
    ["Tools", d.tools],
    ["MCP servers", d.mcp_servers],
    ["Workers", d.workers],
    ["Setup scripts", d.setup],
    ["Checks", d.checks],
  ];
  return (
    <>
      <h2>Resolved</h2>
      <dl class="props">
        <dt>Path</dt>
        <dd>
          <code>{d.path}</code>
        </dd>
        {kinds.map(([k, l]) => (
          <>
            <dt>{k}</dt>
            <dd>{names(l) ?? <span class="muted">—</span>}</dd>
          </>
        ))}
      </dl>
      {d.conflicts.length > 0 && (
        <ul class="problems">
          {d.conflicts.map((c) => (
            <li class="error">
              {c.kind} {c.name}: shipped by {c.capabilities.join(" and ")}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
