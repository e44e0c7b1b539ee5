// The org's secrets and the current workspace's, by name: the API never
// answers a value and this page never shows one. A value is typed into a
// masked field that is cleared once submitted, and only sent.
import { useRef, useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { useScope } from "../../session";
import { Button, Field, Page, Section, Time, useAsync } from "../../ui";
import { ActionForm, value } from "../../ui/form";
import { Listed, Table } from "../../ui/table";

type Secret = Schemas["Secret"];
// Level is whose secrets: the org's (ws "") or a workspace's.
type Level = { org: string; ws: string };

export function Secrets() {
  const { org, ws, can } = useScope();
  return (
    <Page title="Org secrets">
      <p class="muted">Secrets are injected into runtimes by name. Their values are write-only: nobody can read one back here or through the API.</p>
      <SecretSection level={{ org, ws: "" }} admin={can("admin")} />
      {ws && <SecretSection level={{ org, ws }} admin={can("admin")} />}
    </Page>
  );
}

async function listSecrets({ org, ws }: Level): Promise<Secret[]> {
  const query = { limit: 500 };
  const l = ws
    ? must(await api.GET("/api/v1/org/{org}/ws/{workspace}/secrets", { params: { path: { org, workspace: ws }, query } }))
    : must(await api.GET("/api/v1/org/{org}/secrets", { params: { path: { org }, query } }));
  return l.items ?? [];
}

async function deleteSecret({ org, ws }: Level, secret: string) {
  if (ws) must(await api.DELETE("/api/v1/org/{org}/ws/{workspace}/secrets/{secret}", { params: { path: { org, workspace: ws, secret } } }));
  else must(await api.DELETE("/api/v1/org/{org}/secrets/{secret}", { params: { path: { org, secret } } }));
}

// SecretSection is one level's secrets: a table and, for an admin, the
// form that makes or replaces one.
function SecretSection({ level, admin }: { level: Level; admin: boolean }) {
  const list = useAsync(() => listSecrets(level), [level.org, level.ws]);
  const [replacing, setReplacing] = useState("");
  const id = level.ws ? "ws" : "org";
  const title = level.ws ? `Secrets of workspace ${level.ws}` : `Secrets of ${level.org}`;
  return (
    <Section id={`secrets-${id}-h`} heading={title}>
      {level.ws && <p class="muted">A workspace secret shadows the org's of the same name.</p>}
      {admin && <SecretForm level={level} id={id} replacing={replacing} onCancel={() => setReplacing("")} onDone={() => (setReplacing(""), list.reload())} />}
      <Listed list={list} empty="No secrets.">
        {(secrets) => (
          <Table label={title} cols={["Name", "Variable", "Brokered to", "Version", "Updated", admin && "Actions"]}>
            {secrets.map((s) => (
              <SecretRow s={s} level={level} admin={admin} onReplace={() => setReplacing(s.name)} reload={list.reload} />
            ))}
          </Table>
        )}
      </Listed>
    </Section>
  );
}

function SecretRow(props: { s: Secret; level: Level; admin: boolean; onReplace: () => void; reload: () => void }) {
  const { s, level, admin, onReplace, reload } = props;
  return (
    <tr data-secret={s.name}>
      <td>
        <code>{s.name}</code>
      </td>
      <td>
        <code>{s.env}</code>
      </td>
      <td>{s.brokered ? (s.hosts ?? []).join(", ") : <span class="muted">not brokered</span>}</td>
      <td>{s.version}</td>
      <td>
        <Time at={s.updated_at} />
      </td>
      {admin && (
        <td class="row-actions">
          <Button aria-label={`Replace value of ${s.name}`} onClick={onReplace}>
            Replace value
          </Button>
          <Button
            kind="danger"
            aria-label={`Delete ${s.name}`}
            confirm={`Delete the secret ${s.name}? Runtimes started with it keep it until they stop.`}
            onClick={async () => {
              await deleteSecret(level, s.name);
              reload();
            }}
          >
            Delete
          </Button>
        </td>
      )}
    </tr>
  );
}

// SecretForm makes a secret, or replaces the value of the one named by
// replacing. The value field is masked and cleared after every submit.
function SecretForm(props: { level: Level; id: string; replacing: string; onCancel: () => void; onDone: () => void }) {
  const { level, id, replacing, onCancel, onDone } = props;
  const where = level.ws ? `workspace ${level.ws}` : level.org;
  const [name, setName] = useState("");
  const [env, setEnv] = useState("");
  const [brokered, setBrokered] = useState(false);
  const [hosts, setHosts] = useState("");
  const secretValue = useRef<HTMLTextAreaElement>(null);
  const submit = async () => {
    const v = secretValue.current?.value ?? "";
    if (secretValue.current) secretValue.current.value = "";
    await saveSecret(level, replacing, { name: name.trim(), value: v, env: env.trim(), brokered, hosts });
    setName("");
    setEnv("");
    setBrokered(false);
    setHosts("");
    onDone();
  };
  return (
    <ActionForm label={replacing ? `Replace value of ${replacing} (${where})` : `New secret (${where})`} submit={replacing ? "Replace value" : "Create secret"} onSubmit={submit}>
      {replacing ? (
        <p class="field">
          Replacing <code>{replacing}</code>{" "}
          <button type="button" class="btn" onClick={onCancel}>
            Cancel
          </button>
        </p>
      ) : (
        <Field label="Name" id={`secret-name-${id}`} required pattern="[A-Za-z][A-Za-z0-9_.\-]{0,63}" value={name} onInput={(e) => setName(value(e))} />
      )}
      <div class="field field-wide">
        <label for={`secret-value-${id}`}>Value (write-only)</label>
        <textarea
          id={`secret-value-${id}`}
          ref={secretValue}
          class="secret-value mono"
          rows={2}
          required
          autocomplete="off"
          spellcheck={false}
          autoCapitalize="off"
        />
      </div>
      <Field label="Variable (optional)" id={`secret-env-${id}`} value={env} onInput={(e) => setEnv(value(e))} />
      {!replacing && (
        <>
          <div class="field check">
            <input type="checkbox" id={`secret-brokered-${id}`} checked={brokered} onChange={(e) => setBrokered((e.target as HTMLInputElement).checked)} />
            <label for={`secret-brokered-${id}`}>Brokered (never enters the sandbox)</label>
          </div>
          {brokered && (
            <Field label="Hosts it may be sent to" id={`secret-hosts-${id}`} hint="comma-separated: api.example.com, *.example.com" value={hosts} onInput={(e) => setHosts(value(e))} />
          )}
        </>
      )}
    </ActionForm>
  );
}

type SecretInput = { name: string; value: string; env: string; brokered: boolean; hosts: string };

// saveSecret creates the secret at level, or replaces the value (and the
// variable, when given) of the one named replacing.
async function saveSecret({ org, ws }: Level, replacing: string, f: SecretInput) {
  if (replacing) {
    const body: Schemas["ReplaceSecretRequest"] = { value: f.value };
    if (f.env) body.env = f.env;
    if (ws) must(await api.PUT("/api/v1/org/{org}/ws/{workspace}/secrets/{secret}", { params: { path: { org, workspace: ws, secret: replacing } }, body }));
    else must(await api.PUT("/api/v1/org/{org}/secrets/{secret}", { params: { path: { org, secret: replacing } }, body }));
    return;
  }
  const body: Schemas["CreateSecretRequest"] = { name: f.name, value: f.value };
  if (f.env) body.env = f.env;
  if (f.brokered) {
    body.brokered = true;
    body.hosts = f.hosts.split(",").map((h) => h.trim()).filter(Boolean);
  }
  if (ws) must(await api.POST("/api/v1/org/{org}/ws/{workspace}/secrets", { params: { path: { org, workspace: ws } }, body }));
  else must(await api.POST("/api/v1/org/{org}/secrets", { params: { path: { org } }, body }));
}
