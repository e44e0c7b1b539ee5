import { Page } from "../ui";
export function Credits() {
  return <Page title="Credits" />;
}
