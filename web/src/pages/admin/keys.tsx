// The org's API keys: every key for an admin, the caller's own below.
// A new key is shown once, in a box with a copy button, and lives only in
// this page's memory until the box is closed; revoking asks first.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { useScope, type Role } from "../../session";
import { Button, Field, Page, Section, Time, useAsync } from "../../ui";
import { ActionForm, SelectField, value } from "../../ui/form";
import { Listed, Table } from "../../ui/table";
import { RoleOptions } from "./common";

type APIKey = Schemas["APIKey"];

export function Keys() {
  const { org, can } = useScope();
  const [created, setCreated] = useState<Schemas["CreatedKey"] | null>(null);
  const list = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/keys", { params: { path: { org }, query: { limit: 500 } } }));
    return l.items ?? [];
  }, [org]);
  const wss = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/ws", { params: { path: { org }, query: { limit: 500 } } }));
    return l.items ?? [];
  }, [org]);
  // The key shown once is forgotten when the org changes.
  useEffect(() => setCreated(null), [org]);
  const wsName = (id?: string) => (id ? (wss.data?.find((w) => w.id === id)?.name ?? id) : "all");
  return (
    <Page title="API keys">
      {created && <ShownOnce created={created} onClose={() => setCreated(null)} />}
      {can("member") && (
        <CreateKey
          org={org}
          admin={can("admin")}
          owner={can("owner")}
          workspaces={(wss.data ?? []).map((w) => w.name)}
          onCreated={(k) => {
            setCreated(k);
            list.reload();
          }}
        />
      )}
      <h2>Keys of {org}</h2>
      <Listed list={list} empty="No keys.">
        {(keys) => <KeyTable org={org} keys={keys} wsName={wsName} canRevoke={can("member")} reload={list.reload} />}
      </Listed>
    </Page>
  );
}

function KeyTable(props: { org: string; keys: APIKey[]; wsName: (id?: string) => string; canRevoke: boolean; reload: () => void }) {
  const { org, keys, wsName, canRevoke, reload } = props;
  return (
    <Table label="API keys" cols={["Name", "Key", "Role", "Workspace", "Created", "Expires", canRevoke && "Actions"]}>
      {keys.map((k) => {
        const name = k.name || k.prefix;
        return (
          <tr data-key={k.id} data-revoked={k.revoked_at ? "true" : undefined}>
            <td>{k.name || <span class="muted">unnamed</span>}</td>
            <td>
              <code>{k.prefix}…</code>
            </td>
            <td>{k.role}</td>
            <td>{wsName(k.workspace_id)}</td>
            <td>
              <Time at={k.created_at} />
            </td>
            <td>{k.expires_at ? <Time at={k.expires_at} /> : <span class="muted">never</span>}</td>
            {canRevoke && (
              <td>
                {k.revoked_at ? (
                  <span class="muted">
                    revoked <Time at={k.revoked_at} />
                  </span>
                ) : (
                  <Button
                    kind="danger"
                    aria-label={`Revoke ${name}`}
                    confirm={`Revoke the key ${name}? It is refused from its next request.`}
                    onClick={async () => {
                      must(await api.DELETE("/api/v1/org/{org}/keys/{key_id}", { params: { path: { org, key_id: k.id } } }));
                      reload();
                    }}
                  >
                    Revoke
                  </Button>
                )}
              </td>
            )}
          </tr>
        );
      })}
    </Table>
  );
}

const expiries: [string, string][] = [
  ["", "never"],
  ["24h", "in a day"],
  ["168h", "in a week"],
  ["720h", "in 30 days"],
  ["2160h", "in 90 days"],
  ["8760h", "in a year"],
];

// CreateKey makes a key: its name, its holder (an admin may name another
// member; the installation admin, who has no user, must), role (at most
// the holder's and the caller's; the server says so otherwise), workspace
// and expiry.
function CreateKey(props: { org: string; admin: boolean; owner: boolean; workspaces: string[]; onCreated: (k: Schemas["CreatedKey"]) => void }) {
  const { org, admin, owner, workspaces, onCreated } = props;
  const [name, setName] = useState("");
  const [holder, setHolder] = useState("");
  const [role, setRole] = useState("");
  const [ws, setWs] = useState("");
  const [expires, setExpires] = useState("720h");
  const submit = async () => {
    const body: Schemas["CreateKeyRequest"] = { name: name.trim() };
    if (holder.trim()) body.member = holder.trim();
    if (role) body.role = role as Role;
    if (ws) body.workspace = ws;
    if (expires) body.expires_in = expires;
    onCreated(must(await api.POST("/api/v1/org/{org}/keys", { params: { path: { org } }, body })));
    setName("");
    setHolder("");
  };
  return (
    <Section id="create-key-h" heading="New key">
      <ActionForm label="Create an API key" submit="Create key" onSubmit={submit}>
        <Field label="Name" id="key-name" maxLength={100} value={name} onInput={(e) => setName(value(e))} />
        {admin && (
          <Field label="Holder" id="key-holder" hint="a member's email or wallet; empty: you" maxLength={254} value={holder} onInput={(e) => setHolder(value(e))} />
        )}
        <SelectField label="Role" id="key-role" value={role} onChange={(e) => setRole(value(e))}>
          <RoleOptions owner={owner} blank="my role" />
        </SelectField>
        <SelectField label="Workspace" id="key-ws" value={ws} onChange={(e) => setWs(value(e))}>
          <option value="">all of the org</option>
          {workspaces.map((w) => (
            <option value={w}>{w}</option>
          ))}
        </SelectField>
        <SelectField label="Expires" id="key-expires" value={expires} onChange={(e) => setExpires(value(e))}>
          {expiries.map(([v, label]) => (
            <option value={v}>{label}</option>
          ))}
        </SelectField>
      </ActionForm>
    </Section>
  );
}

// ShownOnce shows a new key this once: it takes focus, can be copied, and
// is gone from the page when closed.
function ShownOnce({ created, onClose }: { created: Schemas["CreatedKey"]; onClose: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState("");
  useEffect(() => box.current?.focus(), [created.id]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied("Copied.");
    } catch {
      // No clipboard here (an insecure origin): select it for Ctrl+C.
      input.current?.select();
      setCopied("Selected: press Ctrl+C to copy.");
    }
  };
  return (
    <div class="once-box" role="region" aria-labelledby="once-h" tabIndex={-1} ref={box}>
      <h2 id="once-h">Your new key {created.name ? `“${created.name}”` : ""}</h2>
      <p class="warn-text">
        Copy it now: it is shown this once and cannot be read again. Anyone who has it acts as its holder, with role {created.role}.
      </p>
      <div class="once-key">
        <input ref={input} id="new-key" aria-label="New API key" class="mono" readOnly value={created.key} onFocus={(e) => (e.target as HTMLInputElement).select()} />
        <button type="button" class="btn btn-primary" onClick={copy}>
          Copy key
        </button>
        <button type="button" class="btn" onClick={onClose}>
          Done, hide it
        </button>
      </div>
      <p role="status" class="ok">
        {copied}
      </p>
    </div>
  );
}
