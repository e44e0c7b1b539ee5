import { Page } from "../ui";
export function RuntimePage({ id }: { id: string; tab: string }) {
  return <Page title={"Runtime " + id} />;
}
