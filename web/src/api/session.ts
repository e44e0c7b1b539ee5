// The console's session: a cookie the server sets (HttpOnly, SameSite=Strict)
// when a key or a wallet signs in, and the CSRF token that goes with it. No
// key or session token is kept by a script: the key goes to the server once.
import { api, ApiError, must, setCSRF, type Schemas } from "./client";
import { close } from "../events";

export type ConsoleSession = Schemas["ConsoleSession"];

// An EIP-1193 provider: what a wallet extension puts at window.ethereum.
type EIP1193 = { request(args: { method: string; params?: unknown[] }): Promise<unknown> };

declare global {
  interface Window {
    ethereum?: EIP1193;
  }
}

// forget drops what the tab kept of the last session (the terminals it
// would re-attach), so the next principal in this tab never takes over
// the last one's shell.
function forget() {
  try {
    sessionStorage.clear();
  } catch {
    // storage refused: there is nothing to forget
  }
}

// started records a session's CSRF token for the requests that follow.
function started(s: ConsoleSession): ConsoleSession {
  setCSRF(s.csrf_token);
  return s;
}

// resume returns the signed-in session, or null when the browser has none.
export async function resume(): Promise<ConsoleSession | null> {
  const a = await api.GET("/api/v1/console/session");
  // Two cookies of the console's name (one planted by another page of
  // this site): signing in again cannot help until the browser drops it.
  if (a.response.status === 401 && (a.error as { code?: string } | undefined)?.code === "ambiguous_session_cookie") {
    must(a);
  }
  if (a.response.status === 401 || a.response.status === 404) return null;
  return started(must(a));
}

// signInWithKey opens a session with an API key.
export async function signInWithKey(key: string): Promise<ConsoleSession> {
  forget();
  return started(must(await api.POST("/api/v1/console/session", { body: { key } })));
}

// hasWallet reports whether the browser has a wallet (EIP-1193).
export function hasWallet(): boolean {
  return typeof window !== "undefined" && window.ethereum !== undefined;
}

// walletError is a wallet's refusal (EIP-1193: {code, message}) as an
// ApiError, so it shows with its code like the API's.
function walletError(e: unknown): ApiError {
  const w = (e ?? {}) as { code?: number | string; message?: string };
  return new ApiError(0, "wallet_" + (w.code ?? "error"), w.message ?? String(e));
}

// hexUTF8 is text as personal_sign takes it: 0x and its UTF-8 bytes.
function hexUTF8(text: string): string {
  return "0x" + Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");
}

// signInWithWallet asks the wallet for its account, has it sign the
// server's challenge (EIP-191 personal_sign) and opens a session with the
// signature.
export async function signInWithWallet(): Promise<ConsoleSession> {
  const eth = window.ethereum;
  if (!eth) throw new ApiError(0, "no_wallet", "this browser has no wallet");
  const ask = async (method: string, params?: unknown[]) => {
    try {
      return await eth.request({ method, params });
    } catch (e) {
      throw walletError(e);
    }
  };
  forget();
  const [address] = (await ask("eth_requestAccounts")) as string[];
  if (!address) throw new ApiError(0, "no_wallet_account", "the wallet shared no account");
  const ch = must(await api.POST("/api/auth/challenge", { body: { address } }));
  const signature = (await ask("personal_sign", [hexUTF8(ch.message), address])) as string;
  return started(must(await api.POST("/api/v1/console/session", { body: { nonce: ch.nonce, signature } })));
}

// signOut ends the session on the server and forgets its token.
export async function signOut() {
  await api.DELETE("/api/v1/console/session").catch(() => undefined);
  setCSRF("");
  forget();
  close();
}
