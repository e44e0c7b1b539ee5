// The org's credit journal: every movement, newest first, a page at a
// time, optionally of one kind.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { Empty, ErrorNote, Time } from "../../ui";
import { credits } from "./format";
import { MoreButton, usePaged } from "./paged";

type Kind = Schemas["CreditEntry"]["kind"];
const kinds: Kind[] = ["grant", "adjustment", "hold", "release", "deduction", "refund"];

// Journal lists GET …/credits/journal.
export function Journal({ org, tick }: { org: string; tick: number }) {
  const [kind, setKind] = useState<Kind | "">("");
  const list = usePaged(
    async (cursor) =>
      must(
        await api.GET("/api/v1/org/{org}/credits/journal", {
          params: { path: { org }, query: { kind: kind || undefined, cursor: cursor || undefined } },
        }),
      ),
    [org, kind, tick],
  );
  return (
    <section aria-labelledby="journal-head">
      <h2 id="journal-head">Journal</h2>
      <div class="field narrow">
        <label for="journal-kind">Kind</label>
        <select id="journal-kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as Kind | "")}>
          <option value="">any</option>
          {kinds.map((k) => (
            <option value={k}>{k}</option>
          ))}
        </select>
      </div>
      <ErrorNote error={list.error} />
      {list.items.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Credit journal">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col">Amount</th>
                <th scope="col">Held change</th>
                <th scope="col">Balance after</th>
                <th scope="col">Sandbox</th>
                <th scope="col">Note</th>
              </tr>
            </thead>
            <tbody>
              {list.items.map((e) => (
                <tr data-entry={e.id} data-kind={e.kind}>
                  <td>
                    <Time at={e.created_at} />
                  </td>
                  <td>{e.kind}</td>
                  <td class={e.amount < 0 ? "num neg" : "num"}>{credits(e.amount)}</td>
                  <td class="num">{credits(e.held_change)}</td>
                  <td class="num">{credits(e.balance_after)}</td>
                  <td class="mono">{e.sandbox_id?.slice(0, 8) ?? ""}</td>
                  <td>
                    {e.note}
                    {e.shortfall ? <span class="error"> (unpaid {credits(e.shortfall)})</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!list.loading && list.items.length === 0 && !list.error && <Empty>No movement{kind ? " of this kind" : ""} yet.</Empty>}
      <MoreButton list={list} label="journal entries" />
    </section>
  );
}
