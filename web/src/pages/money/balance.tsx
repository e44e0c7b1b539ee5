// The org's credit balance: what it owns, what holds reserve, what a new
// start may use.
import { api, must } from "../../api/client";
import { ErrorNote, Section, Time, useAsync } from "../../ui";
import { credits } from "./format";

// Balance reads GET …/credits; reload follows the page's.
export function Balance({ org, tick }: { org: string; tick: number }) {
  const acct = useAsync(async () => must(await api.GET("/api/v1/org/{org}/credits", { params: { path: { org } } })), [org, tick]);
  return (
    <Section id="balance-head" heading="Balance">
      <ErrorNote error={acct.error} />
      {acct.data && (
        <dl class="props balance">
          <dt>Balance</dt>
          <dd data-balance={acct.data.balance}>{credits(acct.data.balance)} credits</dd>
          <dt>Held</dt>
          <dd>{credits(acct.data.held)} credits</dd>
          <dt>Available</dt>
          <dd>{credits(acct.data.available)} credits</dd>
          <dt>Last movement</dt>
          <dd>
            <Time at={acct.data.updated_at} />
          </dd>
        </dl>
      )}
    </Section>
  );
}
