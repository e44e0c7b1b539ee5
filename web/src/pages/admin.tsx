import { Page } from "../ui";
export function Members() {
  return <Page title="Members" />;
}
export function Keys() {
  return <Page title="API keys" />;
}
export function SSHKeys() {
  return <Page title="SSH keys" />;
}
export function Secrets() {
  return <Page title="Org secrets" />;
}
export function Orgs() {
  return <Page title="Orgs" />;
}
export function Providers() {
  return <Page title="Providers" />;
}
export function WarmPool() {
  return <Page title="Warm pool" />;
}
export function Provisions() {
  return <Page title="Provisions" />;
}
