// Sign in with an API key or a wallet (filled in with the session API).
export function SignIn(_: { onSignedIn: () => void }) {
  return <main id="main">Sign in</main>;
}
