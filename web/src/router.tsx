// A small history router: the server answers index.html for every path
// that is not the API's, so a page's URL can be reloaded and shared.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

function notify() {
  listeners.forEach((fn) => fn());
}

window.addEventListener("popstate", notify);

// navigate moves to path, adding to the history unless replace.
export function navigate(path: string, replace = false) {
  if (path === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  notify();
}

// useLocation is the current path and query, re-rendered on a move.
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const fn = () => setTick((t) => t + 1);
    listeners.add(fn);
    return () => void listeners.delete(fn);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

export type Params = Record<string, string>;

// match returns the parameters of path under pattern ("/o/:org/w/:ws"),
// or null; a trailing "*" matches the rest as params["*"].
export function match(pattern: string, path: string): Params | null {
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("/").filter(Boolean);
  const params: Params = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    if (w === "*") {
      params["*"] = got.slice(i).map(decodeURIComponent).join("/");
      return params;
    }
    if (i >= got.length) return null;
    if (w.startsWith(":")) params[w.slice(1)] = decodeURIComponent(got[i]);
    else if (w !== got[i]) return null;
  }
  return want.length === got.length ? params : null;
}

// Link is an anchor that moves without a reload; a modified click (a new
// tab) is left to the browser.
export function Link(props: JSX.HTMLAttributes<HTMLAnchorElement> & { href: string; children?: ComponentChildren }) {
  const { href, onClick, ...rest } = props;
  return (
    <a
      href={href}
      {...rest}
      onClick={(e) => {
        if (onClick) (onClick as (e: MouseEvent) => void)(e);
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    />
  );
}
