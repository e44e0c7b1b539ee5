import { Page } from "../ui";
export function Ledger() {
  return <Page title="Sandbox ledger" />;
}
