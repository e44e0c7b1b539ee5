// The org's open holds: credits reserved for starts and resumes that no
// charge or release has closed yet.
import { api, must } from "../../api/client";
import { Section, Time } from "../../ui";
import { PagedList, usePaged } from "../../ui/paged";
import { Table } from "../../ui/table";
import { credits } from "./format";

// Holds lists GET …/credits/holds, newest first.
export function Holds({ org, tick }: { org: string; tick: number }) {
  const list = usePaged(
    async (cursor) => must(await api.GET("/api/v1/org/{org}/credits/holds", { params: { path: { org }, query: { cursor: cursor || undefined } } })),
    [org, tick],
  );
  return (
    <Section id="holds-head" heading="Holds">
      <PagedList list={list} label="holds" empty="No credits are held: no start or resume is waiting on its first charge.">
        {(holds) => (
          <Table label="Holds" cols={["Held since", "Credits", "Sandbox", "Runtime", "Note"]}>
            {holds.map((h) => (
              <tr data-hold={h.id}>
                <td>
                  <Time at={h.created_at} />
                </td>
                <td>{credits(h.held_change)}</td>
                <td class="mono">{h.sandbox_id?.slice(0, 8) ?? "—"}</td>
                <td class="mono">{h.runtime_id?.slice(0, 8) ?? "—"}</td>
                <td>{h.note}</td>
              </tr>
            ))}
          </Table>
        )}
      </PagedList>
    </Section>
  );
}
