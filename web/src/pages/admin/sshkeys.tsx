// The caller's own SSH public keys, for the SSH gateway: list, add, remove.
import { useState } from "preact/hooks";
import { api, must } from "../../api/client";
import { Button, Empty, ErrorNote, Page, Time, useAsync } from "../../ui";
import { ActionForm, InputField, value } from "./common";

export function SSHKeys() {
  const list = useAsync(async () => {
    const l = must(await api.GET("/api/v1/me/ssh-keys", { params: { query: { limit: 500 } } }));
    return l.items ?? [];
  }, []);
  return (
    <Page title="SSH keys">
      <p class="muted">
        Your public keys, for <code>ssh</code>, <code>scp</code> and <code>sftp</code> into any runtime you may reach through the SSH gateway.
      </p>
      <AddSSHKey onDone={list.reload} />
      <h2>Your keys</h2>
      <ErrorNote error={list.error} />
      {list.data && list.data.length === 0 && <Empty>No SSH keys yet.</Empty>}
      {list.data && list.data.length > 0 && (
        <div class="table-wrap">
          <table aria-label="SSH keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Fingerprint</th>
                <th scope="col">Added</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((k) => {
                const name = k.name || k.fingerprint;
                return (
                  <tr data-ssh-key={k.id}>
                    <td>{k.name || <span class="muted">unnamed</span>}</td>
                    <td>
                      <code class="wrap">{k.fingerprint}</code>
                    </td>
                    <td>
                      <Time at={k.created_at} />
                    </td>
                    <td>
                      <Button
                        kind="danger"
                        aria-label={`Delete SSH key ${name}`}
                        confirm={`Delete the SSH key ${name}? Connections signed in with it end within 30 s.`}
                        onClick={async () => {
                          must(await api.DELETE("/api/v1/me/ssh-keys/{key_id}", { params: { path: { key_id: k.id } } }));
                          list.reload();
                        }}
                      >
                        Delete
                      </Button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}

// AddSSHKey registers a public key in authorized_keys form.
function AddSSHKey({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState("");
  const [key, setKey] = useState("");
  return (
    <section aria-labelledby="add-ssh-h">
      <h2 id="add-ssh-h">Add a key</h2>
      <ActionForm
        label="Add an SSH key"
        submit="Add key"
        onSubmit={async () => {
          must(await api.POST("/api/v1/me/ssh-keys", { body: { name: name.trim() || undefined, public_key: key.trim() } }));
          setName("");
          setKey("");
          onDone();
        }}
      >
        <InputField label="Name" id="ssh-name" maxLength={100} value={name} onInput={(e) => setName(value(e))} />
        <div class="field field-wide">
          <label for="ssh-public-key">Public key</label>
          <textarea
            id="ssh-public-key"
            class="mono"
            rows={3}
            required
            spellcheck={false}
            placeholder="ssh-ed25519 AAAA… you@host"
            value={key}
            onInput={(e) => setKey(value(e))}
          />
        </div>
      </ActionForm>
    </section>
  );
}
