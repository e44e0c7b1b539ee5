// Sign in with an API key, or with a wallet where the browser has one.
import { useState } from "preact/hooks";
import { ApiError, failed } from "../api/client";
import { hasWallet, signInWithKey, signInWithWallet } from "../api/session";
import { Button, ErrorNote } from "../ui";

type Props = { onSignedIn: () => void };

// SignIn is the page a browser without a session sees; trouble is why the
// last session could not be resumed, when signing in again will not help.
export function SignIn({ onSignedIn, trouble }: Props & { trouble?: ApiError | null }) {
  return (
    <main id="main" class="signin">
      <h1>Sign in to paddock</h1>
      {trouble && trouble.code !== "ambiguous_session_cookie" && <ErrorNote error={trouble} />}
      {trouble?.code === "ambiguous_session_cookie" && (
        <p class="error" role="alert">
          This browser sends two session cookies for this site, one of them set by another page of the site. Clear this
          site's cookies in the browser, then sign in again. <code>{trouble.code}</code>
        </p>
      )}
      <KeyForm onSignedIn={onSignedIn} />
      {hasWallet() && <WalletSignIn onSignedIn={onSignedIn} />}
    </main>
  );
}

// KeyForm signs in with an API key; the field is cleared once it is sent.
function KeyForm({ onSignedIn }: Props) {
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signInWithKey(key.trim());
      setKey("");
      onSignedIn();
    } catch (err) {
      setError(failed(err));
      setBusy(false);
    }
  };
  return (
    <form class="signin-key" onSubmit={submit} aria-label="Sign in with an API key">
      <div class="field">
        <label for="signin-key">API key</label>
        <input
          id="signin-key"
          name="key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          aria-describedby="signin-key-hint"
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <small id="signin-key-hint" class="muted">
          pdk_ followed by 48 hex digits
        </small>
      </div>
      <button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy}>
        Sign in
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

// WalletSignIn signs a challenge with the browser's wallet (EIP-1193).
function WalletSignIn({ onSignedIn }: Props) {
  return (
    <div class="signin-wallet">
      <p class="muted">or</p>
      <Button
        onClick={async () => {
          await signInWithWallet();
          onSignedIn();
        }}
      >
        Sign in with a wallet
      </Button>
    </div>
  );
}
