// Bytes, base64 and text, the same in Node and browsers (no Buffer).

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The bytes of data: a string is UTF-8. */
export function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}

/** The UTF-8 text of bytes (invalid sequences become U+FFFD). */
export function toText(b: Uint8Array): string {
  return decoder.decode(b);
}

/** base64 of bytes, as the API's format: byte fields carry. */
export function toBase64(b: Uint8Array): string {
  let s = "";
  const chunk = 0x8000;
  for (let i = 0; i < b.length; i += chunk) {
    s += String.fromCharCode(...b.subarray(i, i + chunk));
  }
  return btoa(s);
}

/** The bytes of a base64 field; absent is empty. */
export function fromBase64(s: string | undefined): Uint8Array {
  if (!s) return new Uint8Array(0);
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** concat joins byte arrays into one. */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
