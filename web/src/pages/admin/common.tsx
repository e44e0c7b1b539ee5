// Small pieces the administration pages share: a role picker and how
// durations read.
import type { Role } from "../../session";

export const roles: Role[] = ["viewer", "member", "admin", "owner"];

// RoleOptions are the roles the caller may grant: owner only by an owner.
export function RoleOptions({ owner, blank }: { owner: boolean; blank?: string }) {
  return (
    <>
      {blank !== undefined && <option value="">{blank}</option>}
      {roles
        .filter((r) => owner || r !== "owner")
        .map((r) => (
          <option value={r}>{r}</option>
        ))}
    </>
  );
}

// duration reads a number of milliseconds.
export function duration(ms: number): string {
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
