// The caller's own SSH public keys, for the SSH gateway: list, add, remove.
import { useState } from "preact/hooks";
import { api, must } from "../../api/client";
import { Button, Field, Page, Section, Time, useAsync } from "../../ui";
import { ActionForm, value } from "../../ui/form";
import { Listed, Table } from "../../ui/table";

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
      <Listed list={list} empty="No SSH keys yet.">
        {(keys) => (
          <Table label="SSH keys" cols={["Name", "Fingerprint", "Added", "Actions"]}>
            {keys.map((k) => {
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
          </Table>
        )}
      </Listed>
    </Page>
  );
}

// AddSSHKey registers a public key in authorized_keys form.
function AddSSHKey({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState("");
  const [key, setKey] = useState("");
  return (
    <Section id="add-ssh-h" heading="Add a key">
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
        <Field label="Name" id="ssh-name" maxLength={100} value={name} onInput={(e) => setName(value(e))} />
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
    </Section>
  );
}
