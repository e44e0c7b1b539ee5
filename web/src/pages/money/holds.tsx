// The org's open holds: credits reserved for starts and resumes that no
// charge or release has closed yet.
import { api, must } from "../../api/client";
import { Empty, ErrorNote, Time } from "../../ui";
import { credits } from "./format";
import { MoreButton, usePaged } from "./paged";

// Holds lists GET …/credits/holds, newest first.
export function Holds({ org, tick }: { org: string; tick: number }) {
  const list = usePaged(
    async (cursor) => must(await api.GET("/api/v1/org/{org}/credits/holds", { params: { path: { org }, query: { cursor: cursor || undefined } } })),
    [org, tick],
  );
  return (
    <section aria-labelledby="holds-head">
      <h2 id="holds-head">Holds</h2>
      <ErrorNote error={list.error} />
      {list.items.length > 0 ? (
        <div class="table-wrap">
          <table aria-label="Holds">
            <thead>
              <tr>
                <th scope="col">Held since</th>
                <th scope="col">Credits</th>
                <th scope="col">Sandbox</th>
                <th scope="col">Runtime</th>
                <th scope="col">Note</th>
              </tr>
            </thead>
            <tbody>
              {list.items.map((h) => (
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
            </tbody>
          </table>
        </div>
      ) : (
        !list.loading && !list.error && <Empty>No credits are held: no start or resume is waiting on its first charge.</Empty>
      )}
      <MoreButton list={list} label="holds" />
    </section>
  );
}
