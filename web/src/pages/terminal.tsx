// The terminal tab of a runtime's page.
export function Terminal(_: { runtime: string }) {
  return <div />;
}
