// The secrets tab: the secrets bound to a runtime, by name, with where
// they come from and how the sandbox sees them. Never a value: the API
// answers none.
import { api, ApiError, must, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Empty, ErrorNote, useAsync } from "../../ui";
import type { Runtime } from "./common";
import { Table } from "../../ui/table";

type Secret = Schemas["Secret"];

// Bound is a binding (as the config names it) and the secret it names,
// or why it was not found.
type Bound = { ref: string; secret?: Secret; scope?: string; error?: ApiError };

// resolve finds the secret ref names: the workspace's (which shadows the
// org's), else the org's.
async function resolve(org: string, ws: string, ref: string): Promise<Bound> {
  const inWs = await api.GET("/api/v1/org/{org}/ws/{workspace}/secrets/{secret}", { params: { path: { org, workspace: ws, secret: ref } } });
  if (inWs.data) return { ref, secret: inWs.data, scope: "workspace" };
  try {
    return { ref, secret: must(await api.GET("/api/v1/org/{org}/secrets/{secret}", { params: { path: { org, secret: ref } } })), scope: "org" };
  } catch (e) {
    return { ref, error: e as ApiError };
  }
}

// SecretsTab lists the secrets the runtime's config binds.
export function SecretsTab({ rt }: { rt: Runtime }) {
  const { org, ws } = useScope();
  const refs = rt.config.secrets ?? [];
  const bound = useAsync(() => Promise.all(refs.map((r) => resolve(org, ws, r))), [org, ws, refs.join("\n")]);
  if (!refs.length) return <Empty>No secrets are bound to this runtime.</Empty>;
  return (
    <>
      <ErrorNote error={bound.error} />
      <Table class="rt-table" label="Bound secrets" cols={["Name", "Scope", "Variable", "Brokered to hosts", "Version"]}>
        {(bound.data ?? refs.map((ref) => ({ ref }) as Bound)).map((b) => (
          <SecretRow b={b} />
        ))}
      </Table>
      <p class="muted">Values are write-only: neither the API nor the console ever shows one.</p>
    </>
  );
}

// SecretRow is one bound secret's metadata, or why it was not found.
function SecretRow({ b }: { b: Bound }) {
  const s = b.secret;
  return (
    <tr data-secret={b.ref}>
      <th scope="row">{s?.name ?? b.ref}</th>
      <td>{b.scope ?? (b.error ? <ErrorNote error={b.error} /> : "…")}</td>
      <td class="mono">{s?.env}</td>
      <td>{s?.brokered ? (s.hosts ?? []).join(", ") || "yes" : "no"}</td>
      <td class="num">{s?.version}</td>
    </tr>
  );
}
