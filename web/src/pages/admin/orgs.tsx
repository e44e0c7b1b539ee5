// The installation admin's orgs: list and create them, and grant an org
// credits with its balance in view.
import { useState } from "preact/hooks";
import { api, must } from "../../api/client";
import { Link } from "../../router";
import { ErrorNote, Field, Page, Section, Time, useAsync } from "../../ui";
import { ActionForm, Note, SelectField, value } from "../../ui/form";
import { Listed, Table } from "../../ui/table";
import { credits } from "../money/format";

export function Orgs() {
  const list = useAsync(async () => {
    const l = must(await api.GET("/api/v1/orgs", { params: { query: { limit: 500 } } }));
    return l.items ?? [];
  }, []);
  const [grantTo, setGrantTo] = useState("");
  const names = (list.data ?? []).map((o) => o.name);
  const target = grantTo || names[0] || "";
  return (
    <Page title="Orgs">
      <CreateOrg onDone={list.reload} />
      <h2>Orgs of this installation</h2>
      <Listed list={list} empty="No orgs.">
        {(orgs) => (
          <Table label="Orgs" cols={["Name", "Created", "Actions"]}>
            {orgs.map((o) => (
              <tr data-org={o.name}>
                <td>
                  <Link href={`/o/${encodeURIComponent(o.name)}`}>{o.name}</Link>
                </td>
                <td>
                  <Time at={o.created_at} />
                </td>
                <td>
                  <button type="button" class="btn" aria-label={`Grant credits to ${o.name}`} onClick={() => setGrantTo(o.name)}>
                    Grant credits
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Listed>
      {target && <Grant orgs={names} org={target} onOrg={setGrantTo} />}
    </Page>
  );
}

// CreateOrg makes an org; its name is a slug.
function CreateOrg({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState("");
  return (
    <Section id="create-org-h" heading="New org">
      <ActionForm
        label="Create an org"
        submit="Create org"
        onSubmit={async () => {
          must(await api.POST("/api/v1/orgs", { body: { name: name.trim() } }));
          setName("");
          onDone();
        }}
      >
        <Field
          label="Name"
          id="org-name"
          required
          pattern="[a-z0-9][a-z0-9\-]{0,62}"
          hint="lowercase letters, digits and dashes"
          value={name}
          onInput={(e) => setName(value(e))}
        />
      </ActionForm>
    </Section>
  );
}

// newKey is an idempotency key: one per grant the admin means (a new
// org or amount makes a new one), so a submit retried grants once.
const newKey = () => crypto.randomUUID();

// Grant shows an org's balance and grants it credits.
function Grant({ orgs, org, onOrg }: { orgs: string[]; org: string; onOrg: (o: string) => void }) {
  const acct = useAsync(async () => must(await api.GET("/api/v1/org/{org}/credits", { params: { path: { org } } })), [org]);
  const [amount, setAmount] = useState("");
  const [note, setNote] = useState("");
  const [key, setKey] = useState(newKey);
  const [done, setDone] = useState("");
  const submit = async () => {
    setDone("");
    const e = must(
      await api.POST("/api/v1/org/{org}/credits/grants", {
        params: { path: { org } },
        body: { amount: Number(amount), idempotency_key: key, note: note.trim() || undefined },
      }),
    );
    setDone(`Granted ${credits(e.amount)} credits to ${org}; the balance is ${credits(e.balance_after)}.`);
    setAmount("");
    setNote("");
    setKey(newKey());
    acct.reload();
  };
  return (
    <Section id="grant-h" heading="Credit grants" class="grant">
      <SelectField label="Org" id="grant-org" value={org} onChange={(e) => (onOrg(value(e)), setKey(newKey()), setDone(""))}>
        {orgs.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </SelectField>
      <ErrorNote error={acct.error} />
      {acct.data && (
        <dl class="props" aria-label={`Credits of ${org}`}>
          <dt>Balance</dt>
          <dd data-balance={acct.data.balance}>{credits(acct.data.balance)}</dd>
          <dt>Held</dt>
          <dd>{credits(acct.data.held)}</dd>
          <dt>Available</dt>
          <dd>{credits(acct.data.available)}</dd>
        </dl>
      )}
      <ActionForm label={`Grant credits to ${org}`} submit="Grant" onSubmit={submit}>
        <Field label="Amount" id="grant-amount" type="number" required min="0.000001" step="any" value={amount} onInput={(e) => (setAmount(value(e)), setKey(newKey()))} />
        <Field label="Note (optional)" id="grant-note" maxLength={1024} value={note} onInput={(e) => setNote(value(e))} />
      </ActionForm>
      {done && <Note>{done}</Note>}
    </Section>
  );
}
