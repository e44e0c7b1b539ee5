// TextField is a labelled input that takes every attribute of an input
// (value, type, min, pattern…), with an optional hint it is described by.
import type { JSX } from "preact";

export function TextField(props: JSX.InputHTMLAttributes<HTMLInputElement> & { label: string; id: string; hint?: string }) {
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
