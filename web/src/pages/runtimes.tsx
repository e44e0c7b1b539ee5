import { Page } from "../ui";
export function Runtimes() {
  return <Page title="Runtimes" />;
}
