// The files tab of a runtime's page.
export function Files(_: { runtime: string }) {
  return <div />;
}
