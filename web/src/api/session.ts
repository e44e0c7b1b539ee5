// The console's session: a cookie the server sets (HttpOnly, SameSite)
// when a key or a wallet signs in, and the CSRF token that goes with it.
import { csrfHeaders, setCSRF } from "./client";
import { close } from "../events";

// resume returns the signed-in session, or null when the browser has none.
// TODO(console-session): the typed client once the schema has the route.
export async function resume(): Promise<{ csrf_token: string } | null> {
  const r = await fetch("/api/v1/console/session", { credentials: "same-origin" });
  if (!r.ok) return null;
  const s = (await r.json()) as { csrf_token: string };
  setCSRF(s.csrf_token);
  return s;
}

// signOut ends the session on the server and forgets its token.
export async function signOut() {
  await fetch("/api/v1/console/session", { method: "DELETE", credentials: "same-origin", headers: csrfHeaders() });
  setCSRF("");
  close();
}
