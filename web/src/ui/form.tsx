// Forms: a form that runs an action on submit, labelled selects, and a
// polite note of what an action did.
import type { ComponentChildren, JSX } from "preact";
import { ErrorNote, useAction } from "./index";

// ActionForm is a form that runs an action on submit (Enter works), shows
// it is busy and reports its failure under itself. Its submit button is
// primary unless plain.
export function ActionForm(props: {
  label?: string;
  submit: string;
  onSubmit: () => Promise<unknown>;
  class?: string;
  plain?: boolean;
  children?: ComponentChildren;
}) {
  const { busy, error, run } = useAction(props.onSubmit);
  const submit = (e: Event) => {
    e.preventDefault();
    run();
  };
  return (
    <form class={props.class ?? "inline admin-form"} aria-label={props.label} onSubmit={submit}>
      {props.children}
      <button type="submit" class={props.plain ? "btn" : "btn btn-primary"} disabled={busy} aria-busy={busy}>
        {props.submit}
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

// SelectField is a labelled select; narrow keeps it to its content's
// width.
export function SelectField(
  props: JSX.SelectHTMLAttributes<HTMLSelectElement> & { label: string; id: string; narrow?: boolean; children?: ComponentChildren },
) {
  const { label, id, narrow, children, ...rest } = props;
  return (
    <div class={narrow ? "field narrow" : "field"}>
      <label for={id}>{label}</label>
      <select id={id} {...rest}>
        {children}
      </select>
    </div>
  );
}

// value is an input's or a select's value from its event.
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
