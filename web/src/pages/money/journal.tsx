// The org's credit journal: every movement, newest first, a page at a
// time, optionally of one kind.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { Section, Time } from "../../ui";
import { SelectField, value } from "../../ui/form";
import { PagedList, usePaged } from "../../ui/paged";
import { Table } from "../../ui/table";
import { credits } from "./format";

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
    <Section id="journal-head" heading="Journal">
      <SelectField label="Kind" id="journal-kind" narrow value={kind} onChange={(e) => setKind(value(e) as Kind | "")}>
        <option value="">any</option>
        {kinds.map((k) => (
          <option value={k}>{k}</option>
        ))}
      </SelectField>
      <PagedList list={list} label="journal entries" empty={`No movement${kind ? " of this kind" : ""} yet.`}>
        {(entries) => (
          <Table label="Credit journal" cols={["When", "Kind", "Amount", "Held change", "Balance after", "Sandbox", "Note"]}>
            {entries.map((e) => (
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
          </Table>
        )}
      </PagedList>
    </Section>
  );
}
