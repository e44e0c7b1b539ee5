// Small pieces the administration pages share: labelled selects, a role
// picker, a poll while a page is open, and how durations and credits read.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type ApiError, failed } from "../../api/client";
import type { Role } from "../../session";
import { ErrorNote } from "../../ui";

export const roles: Role[] = ["viewer", "member", "admin", "owner"];

// InputField is a labelled input that takes every input attribute
// (required, pattern, type, maxLength), with an optional hint.
export function InputField(props: JSX.InputHTMLAttributes<HTMLInputElement> & { label: string; id: string; hint?: string }) {
  const { label, id, hint, ...rest } = props;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} aria-describedby={hint ? id + "-hint" : undefined} {...rest} />
      {hint && (
        <small id={id + "-hint"} class="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

// SelectField is a labelled select.
export function SelectField(props: JSX.SelectHTMLAttributes<HTMLSelectElement> & { label: string; id: string; children?: ComponentChildren }) {
  const { label, id, children, ...rest } = props;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} {...rest}>
        {children}
      </select>
    </div>
  );
}

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

// usePoll calls reload every ms while the page is open.
export function usePoll(reload: () => void, ms: number) {
  useEffect(() => {
    const t = window.setInterval(reload, ms);
    return () => window.clearInterval(t);
  }, [reload, ms]);
}

// duration reads a number of milliseconds.
export function duration(ms: number): string {
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

// credits reads an amount of credits, exact to a millionth.
export function credits(n: number): string {
  return n.toLocaleString(undefined, { maximumFractionDigits: 6 });
}

// value is an input's value from its event.
export function value(e: Event): string {
  return (e.target as HTMLInputElement).value;
}

// Note is a polite status message (what an action did).
export function Note({ children }: { children?: ComponentChildren }) {
  return (
    <p class="ok" role="status">
      {children}
    </p>
  );
}

// ActionForm is a form that runs an action on submit (Enter works), shows
// it is busy and reports its failure under itself.
export function ActionForm(props: { label: string; submit: string; onSubmit: () => Promise<unknown>; children?: ComponentChildren }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await props.onSubmit();
    } catch (x) {
      setError(failed(x));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="inline admin-form" aria-label={props.label} onSubmit={run}>
      {props.children}
      <button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy}>
        {props.submit}
      </button>
      <ErrorNote error={error} />
    </form>
  );
}
