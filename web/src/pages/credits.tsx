// The org's money: its balance, its open holds, its usage by project and
// day, and its journal. All of it is the org admins' (the API answers 403
// below admin), so others are told so instead of shown failing requests.
import { useEffect, useState } from "preact/hooks";
import { listen } from "../events";
import { useScope } from "../session";
import { Button, Page } from "../ui";
import { Balance } from "./money/balance";
import { Holds } from "./money/holds";
import { Journal } from "./money/journal";
import { Usage } from "./money/usage";

// Credits is the page; tick reloads every section.
export function Credits() {
  const { org, role, can } = useScope();
  const [tick, setTick] = useState(0);
  // A start, pause or kill moves credits: read them again.
  useEffect(() => listen("runtime", (e) => (["running", "paused", "killed", "deleted", "failed"].includes(e.data?.kind) ? setTick((t) => t + 1) : undefined)), []);
  if (!can("admin")) {
    return (
      <Page title="Credits">
        <p class="note" role="note">
          Credits, holds, usage and the journal are shown to the org's admins and owners. Your role in {org} is {role || "none"}: ask an admin of the org.
        </p>
      </Page>
    );
  }
  return (
    <Page title="Credits" actions={<Button onClick={() => setTick((t) => t + 1)}>Refresh</Button>}>
      <Balance org={org} tick={tick} />
      <Holds org={org} tick={tick} />
      <Usage org={org} tick={tick} />
      <Journal org={org} tick={tick} />
    </Page>
  );
}
