// Who is signed in, and what they may do where. The console asks the
// API, never guesses: the server's Authorize decides every request, and
// these helpers only hide controls the answer would refuse.
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Schemas } from "./api/client";

export type Role = Schemas["Role"];
export type Me = Schemas["Me"];

const order: Record<string, number> = { viewer: 1, member: 2, admin: 3, owner: 4 };

// roleIn is the role me has in org (by name), "" when it reaches none.
export function roleIn(me: Me, org: string): Role | "" {
  if (me.installation_admin) return "owner";
  const m = me.memberships.find((m) => m.org === org);
  return m ? m.role : "";
}

// atLeast reports whether role meets need.
export function atLeast(role: Role | "", need: Role): boolean {
  return (order[role] ?? 0) >= order[need];
}

export type Scope = {
  me: Me;
  org: string; // "" until one is chosen
  ws: string;
  role: Role | "";
  // can reports whether the principal's role in the current org meets need.
  can: (need: Role) => boolean;
  signOut: () => Promise<void>;
};

export const ScopeContext = createContext<Scope | null>(null);

export function useScope(): Scope {
  const s = useContext(ScopeContext);
  if (!s) throw new Error("useScope outside a signed-in console");
  return s;
}
