// The runtime pages' text input.
import type { JSX } from "preact";

// TextField is a labelled input that takes every attribute of an input
// (value, type, min, pattern…), with an optional hint it is described by.
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
