// The console's small kit: loading data, showing errors, buttons that
// wait for their action, tabs and times. Pages build from these so they
// look and behave alike, and so keyboard and screen-reader use is the
// same everywhere.
import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, failed } from "../api/client";
import { listen } from "../events";

export type Async<T> = { data?: T; error?: ApiError; loading: boolean; reload: () => void };

// useAsync runs load on mount and whenever deps change, and again on
// reload() or after the event stream was broken and came back.
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const gen = useRef(0);
  useEffect(() => {
    const mine = ++gen.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === gen.current && setState({ data, loading: false }),
      (e) => mine === gen.current && setState((s) => ({ data: s.data, error: failed(e), loading: false })),
    );
  }, [...deps, tick]);
  useEffect(() => listen("resync", () => setTick((t) => t + 1)), []);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

// ErrorNote shows an API error with its stable code; assertive, so a
// screen reader announces it.
export function ErrorNote({ error }: { error?: ApiError | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error.message} <code>{error.code}</code>
    </p>
  );
}

// useAction runs an action and tells whether it is running and how it
// last failed: what a button or a form shows while it waits.
export function useAction(action: () => Promise<unknown> | void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  // running guards against a second run before the first re-renders busy
  // (a double click): an action is sent once.
  const running = useRef(false);
  const run = async () => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError(failed(e));
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  return { busy, error, run };
}

// Button runs an action, shows it is busy, and reports its failure next
// to itself.
export function Button(
  props: Omit<JSX.ButtonHTMLAttributes<HTMLButtonElement>, "onClick"> & {
    onClick: () => Promise<unknown> | void;
    kind?: "primary" | "danger" | "plain";
    confirm?: string;
  },
) {
  const { onClick, kind = "plain", confirm, children, ...rest } = props;
  const { busy, error, run } = useAction(onClick);
  const click = () => {
    if (confirm && !window.confirm(confirm)) return;
    run();
  };
  return (
    <span class="button-wrap">
      <button type="button" class={"btn btn-" + kind} {...rest} disabled={busy || Boolean(rest.disabled)} aria-busy={busy} onClick={click}>
        {children}
      </button>
      {error && (
        <span class="error inline" role="alert">
          {error.message} <code>{error.code}</code>
        </span>
      )}
    </span>
  );
}

export type Tab = { id: string; label: string };

// Tabs is a tab list as WAI-ARIA describes it: arrow keys move between
// tabs, and the selected one names the panel.
export function Tabs(props: { tabs: Tab[]; current: string; onSelect: (id: string) => void; label: string }) {
  const { tabs, current, onSelect, label } = props;
  const onKey = (e: KeyboardEvent) => {
    const i = tabs.findIndex((t) => t.id === current);
    let j = -1;
    if (e.key === "ArrowRight") j = (i + 1) % tabs.length;
    if (e.key === "ArrowLeft") j = (i - 1 + tabs.length) % tabs.length;
    if (e.key === "Home") j = 0;
    if (e.key === "End") j = tabs.length - 1;
    if (j < 0) return;
    e.preventDefault();
    onSelect(tabs[j].id);
    (document.getElementById("tab-" + tabs[j].id) as HTMLElement | null)?.focus();
  };
  return (
    <div role="tablist" aria-label={label} class="tabs" onKeyDown={onKey}>
      {tabs.map((t) => (
        <button
          type="button"
          role="tab"
          id={"tab-" + t.id}
          aria-selected={t.id === current}
          aria-controls={"panel-" + t.id}
          tabIndex={t.id === current ? 0 : -1}
          onClick={() => onSelect(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function TabPanel({ id, children }: { id: string; children?: ComponentChildren }) {
  return (
    <div role="tabpanel" id={"panel-" + id} aria-labelledby={"tab-" + id} tabIndex={0} class="panel">
      {children}
    </div>
  );
}

// Time shows an instant in the reader's locale, with the exact time as
// its machine-readable value.
export function Time({ at }: { at?: string | null }) {
  if (!at) return <span class="muted">—</span>;
  const d = new Date(at);
  return <time dateTime={at}>{d.toLocaleString()}</time>;
}

// Field is a labelled input.
export function Field(props: JSX.InputHTMLAttributes<HTMLInputElement> & { label: string; id: string; hint?: string }) {
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

// Page is a page's heading and body; the heading takes focus on a move
// so a screen reader announces the new page.
export function Page({ title, actions, children }: { title: string; actions?: ComponentChildren; children?: ComponentChildren }) {
  const h = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = title + " · paddock";
    h.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1} ref={h}>
          {title}
        </h1>
        {actions && <div class="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

// Section is a part of a page under its own heading, which names it.
export function Section(props: JSX.HTMLAttributes<HTMLElement> & { id: string; heading: ComponentChildren }) {
  const { id, heading, children, ...rest } = props;
  return (
    <section aria-labelledby={id} {...rest}>
      <h2 id={id}>{heading}</h2>
      {children}
    </section>
  );
}

// usePolled is useAsync of load, read again every ms while the page is
// open.
export function usePolled<T>(load: () => Promise<T>, ms: number): Async<T> {
  const a = useAsync(load, []);
  useEffect(() => {
    const t = window.setInterval(a.reload, ms);
    return () => window.clearInterval(t);
  }, [a.reload, ms]);
  return a;
}

// Empty says a list has nothing to show.
export function Empty({ children }: { children?: ComponentChildren }) {
  return <p class="muted empty">{children}</p>;
}
