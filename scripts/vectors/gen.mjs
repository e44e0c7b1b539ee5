// gen.mjs writes the test vectors that internal/auth/wallet and
// internal/auth/paseto check themselves against, computed by implementations
// that share no code with ours: ethers for EIP-191 personal-sign, paseto-ts
// for PASETO v4.local. The output is deterministic (fixed keys, RFC 6979
// signatures, nonces derived from each case's name), so a re-run with the
// pinned versions rewrites the same files.
//
// Run: cd scripts/vectors && npm ci && node gen.mjs

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import * as ethers from "ethers";
import { decrypt, encrypt } from "paseto-ts/v4";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const pasetoTsVersion = JSON.parse(readFileSync(join(here, "node_modules", "paseto-ts", "package.json"), "utf8")).version;

function write(rel, obj) {
  const path = join(root, rel);
  writeFileSync(path, JSON.stringify(obj, null, 2) + "\n");
  console.log(`wrote ${rel}`);
}

function check(cond, what) {
  if (!cond) throw new Error(`generator self-check failed: ${what}`);
}

// ---- EIP-191 personal-sign ----------------------------------------------

const keys = {
  one: "0x" + "00".repeat(31) + "01",
  two: "0x" + "00".repeat(31) + "02",
  // n-1, the largest valid secp256k1 private key.
  max: "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140",
  // Widely published test keys (web3.js docs, Hardhat account #0).
  web3: "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
  hardhat: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
};
const wallets = Object.fromEntries(
  Object.entries(keys).map(([name, key]) => [name, new ethers.Wallet(key)]),
);

// challenge is the sign-in message format the server will issue.
function challenge(address, nonce) {
  return [
    "127.0.0.1:8080 wants you to sign in to paddock with your Ethereum account:",
    address,
    "",
    `Nonce: ${nonce}`,
    "Issued At: 2026-11-25T21:00:00Z",
    "Expiration Time: 2026-11-25T21:05:00Z",
  ].join("\n");
}

const lower = (a) => a.toLowerCase();
const upper = (a) => "0x" + a.slice(2).toUpperCase();

const positive = [
  { name: "ascii", key: "one", form: "checksummed", message: "hello" },
  { name: "empty", key: "one", form: "lowercase", message: "" },
  { name: "unicode", key: "two", form: "checksummed", message: "héllo wörld — 日本語 🔐" },
  { name: "newlines", key: "two", form: "lowercase", message: "line one\nline two\r\nline three\n" },
  {
    name: "long",
    key: "web3",
    form: "uppercase",
    // Over 100 bytes, so the decimal length prefix has three digits.
    message: "paddock ".repeat(20).trim(),
  },
  { name: "binary", key: "max", form: "checksummed", bytes: "0x00ff0a19457468657265756d" },
  {
    name: "challenge",
    key: "hardhat",
    form: "checksummed",
    message: challenge(wallets.hardhat.address, "3f1c9a7be04d2c6185f0a3e9d7b24c61"),
  },
  {
    name: "challenge-lowercase-address",
    key: "web3",
    form: "lowercase",
    message: challenge(wallets.web3.address, "a0b1c2d3e4f5061728394a5b6c7d8e9f"),
  },
];

const valid = positive.map((c) => {
  const w = wallets[c.key];
  const msg = c.bytes !== undefined ? ethers.getBytes(c.bytes) : c.message;
  const signature = w.signMessageSync(msg);
  check(ethers.verifyMessage(msg, signature) === w.address, `${c.name} verifies`);
  const address = { checksummed: w.address, lowercase: lower(w.address), uppercase: upper(w.address) }[c.form];
  check(ethers.getAddress(address) === w.address, `${c.name} address form`);
  const v = {
    name: c.name,
    // Public test keys only: the signer's key, so our signing can be held
    // to ethers' (both RFC 6979, so byte for byte).
    private_key: keys[c.key],
    address,
    checksummed: w.address,
  };
  if (c.bytes !== undefined) v.message_hex = c.bytes;
  else v.message = c.message;
  v.hash = ethers.hashMessage(msg);
  v.signature = signature;
  return v;
});

const N = ethers.N;
const hex32 = (n) => n.toString(16).padStart(64, "0");

// highS returns the other valid-looking signature for the same key and
// message: s' = n - s with the recovery bit flipped (EIP-2 malleability).
function highS(signature) {
  const sig = ethers.Signature.from(signature);
  const s = N - BigInt(sig.s);
  check(s > N / 2n, "high s is in the upper half");
  const v = sig.v === 27 ? 28 : 27;
  return sig.r + hex32(s) + v.toString(16);
}

function withV(signature, v) {
  return signature.slice(0, 130) + v.toString(16).padStart(2, "0");
}

// flipCase swaps the case of the first letter in a checksummed address,
// which stays mixed-case and so must fail the EIP-55 checksum.
function flipCase(address) {
  const i = [...address].findIndex((ch, j) => j >= 2 && /[a-fA-F]/.test(ch));
  const ch = address[i];
  const flipped = ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase();
  return address.slice(0, i) + flipped + address.slice(i + 1);
}

const one = wallets.one;
const helloSig = one.signMessageSync("hello");
const signin = challenge(one.address, "00112233445566778899aabbccddeeff");
const signinSig = one.signMessageSync(signin);

const invalid = [];
function negative(v) {
  invalid.push(v);
}

// A signature over another message recovers some unrelated address.
{
  const message = signin.replace("00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100");
  const recovers = ethers.verifyMessage(message, signinSig);
  check(recovers !== one.address, "different message recovers another address");
  negative({ name: "different-message", reason: "wrong_signer", address: one.address, message, signature: signinSig, recovers });
}
// A good signature by another key.
{
  const signature = wallets.two.signMessageSync("hello");
  negative({
    name: "other-key",
    reason: "wrong_signer",
    address: lower(one.address),
    message: "hello",
    signature,
    recovers: wallets.two.address,
  });
}
negative({ name: "high-s", reason: "invalid_signature", address: one.address, message: "hello", signature: highS(helloSig) });
negative({ name: "high-s-challenge", reason: "invalid_signature", address: one.address, message: signin, signature: highS(signinSig) });
// 29..34 are Bitcoin-style compact recovery codes (overflow, compressed key);
// a decoder that only subtracts 27 would accept some of them.
for (const v of [29, 31, 32, 2]) {
  negative({ name: `v-${v}`, reason: "invalid_signature", address: one.address, message: "hello", signature: withV(helloSig, v) });
}
negative({
  name: "zero-r",
  reason: "invalid_signature",
  address: one.address,
  message: "hello",
  signature: "0x" + "00".repeat(32) + helloSig.slice(66),
});
negative({
  name: "zero-s",
  reason: "invalid_signature",
  address: one.address,
  message: "hello",
  signature: helloSig.slice(0, 66) + "00".repeat(32) + helloSig.slice(130),
});
negative({
  name: "truncated-signature",
  reason: "malformed_signature",
  address: one.address,
  message: "hello",
  signature: helloSig.slice(0, 128),
});
negative({
  name: "long-signature",
  reason: "malformed_signature",
  address: one.address,
  message: "hello",
  signature: helloSig + "00",
});
negative({
  name: "bad-hex-signature",
  reason: "malformed_signature",
  address: one.address,
  message: "hello",
  signature: helloSig.slice(0, 10) + "zz" + helloSig.slice(12),
});
negative({
  name: "signature-without-0x",
  reason: "malformed_signature",
  address: one.address,
  message: "hello",
  signature: helloSig.slice(2),
});
{
  const address = flipCase(one.address);
  let refused = false;
  try {
    ethers.getAddress(address);
  } catch {
    refused = true;
  }
  check(refused, "ethers refuses the flipped-case address");
  negative({ name: "bad-checksum", reason: "malformed_address", address, message: "hello", signature: helloSig });
}
negative({
  name: "bad-hex-address",
  reason: "malformed_address",
  address: lower(one.address).slice(0, 41) + "g",
  message: "hello",
  signature: helloSig,
});
negative({
  name: "short-address",
  reason: "malformed_address",
  address: lower(one.address).slice(0, 40),
  message: "hello",
  signature: helloSig,
});

write("internal/auth/wallet/testdata/eip191.json", {
  generator: `scripts/vectors/gen.mjs with ethers ${ethers.version}`,
  valid,
  invalid,
});

// ---- PASETO v4.local ----------------------------------------------------

const pasetoKeys = {
  counting: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
  random: "5c1f8e0a93d2b7466e0f31a8c4d95b27e80c6d13fa4b9e7250d8a63c1e7f0b94",
};

const kid = "k4.lid." + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const cases = [
  { name: "payload-only", key: "counting", payload: { sub: "0x7e5f4552091a69125d5dfcb7b8c2659029395bdf", exp: "2026-11-25T22:00:00Z" } },
  { name: "json-footer", key: "counting", payload: { sub: "user-1", iat: "2026-11-25T21:00:00Z" }, footer: JSON.stringify({ kid }) },
  { name: "implicit", key: "random", payload: { sid: "3f1c9a7be04d2c6185f0a3e9d7b24c61" }, implicit: "paddock-session" },
  {
    name: "footer-and-implicit-unicode",
    key: "random",
    payload: { name: "Zoë 🔐 日本", note: "line\nbreak" },
    footer: "kid-2026-11",
    implicit: JSON.stringify({ aud: "paddock", origin: "127.0.0.1:8080" }),
  },
  // Several ChaCha20 blocks, and a base64 length that needs no padding trick.
  { name: "long-payload", key: "counting", payload: { data: "x".repeat(1000), n: 42 } },
  { name: "empty-object", key: "random", payload: {} },
];

const hex = (b) => Buffer.from(b).toString("hex");
const fromHex = (s) => new Uint8Array(Buffer.from(s, "hex"));
const LOCAL_MAGIC = new TextEncoder().encode("k4.local.");

const tokens = [];
for (const c of cases) {
  const nonce = createHash("sha256").update(`paddock paseto-ts vector ${c.name}`).digest();
  const getRandomValues = (arr) => {
    check(arr.length === 32, "paseto-ts asks for a 32-byte nonce");
    arr.set(nonce);
    return arr;
  };
  const key = new Uint8Array([...LOCAL_MAGIC, ...fromHex(pasetoKeys[c.key])]);
  const payload = JSON.stringify(c.payload);
  const footer = c.footer ?? "";
  const implicit = c.implicit ?? "";
  const token = encrypt(key, payload, {
    footer,
    assertion: implicit,
    addIat: false,
    addExp: false,
    validatePayload: false,
    getRandomValues,
  });
  const back = await decrypt(key, token, { assertion: implicit, validatePayload: false });
  check(JSON.stringify(back.payload) === payload, `${c.name} decrypts to its payload`);
  tokens.push({
    name: c.name,
    key: pasetoKeys[c.key],
    nonce: hex(nonce),
    payload,
    footer,
    "implicit-assertion": implicit,
    token,
  });
}

write("internal/auth/paseto/testdata/paseto-ts.json", {
  generator: `scripts/vectors/gen.mjs with paseto-ts ${pasetoTsVersion} (v4.local); nonce is what gen.mjs handed paseto-ts as randomness`,
  tests: tokens,
});
