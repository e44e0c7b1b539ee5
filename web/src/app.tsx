// The console's frame: the session gate, the scope (org and workspace,
// from the URL), the navigation and the page the URL names.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, ApiError, failed, must, onSignedOut } from "./api/client";
import { resume, signOut } from "./api/session";
import { Link, match, navigate, useLocation, type Params } from "./router";
import { atLeast, roleIn, ScopeContext, useScope, type Me, type Role, type Scope } from "./session";
import { ErrorNote, useAsync } from "./ui";
import { SignIn } from "./pages/signin";
import { Runtimes } from "./pages/runtimes";
import { RuntimePage } from "./pages/runtime";
import { Ledger } from "./pages/ledger";
import { Credits } from "./pages/credits";
import { Keys, Members, Orgs, Provisions, Providers, Secrets, SSHKeys, WarmPool } from "./pages/admin";

type Route = { pattern: string; render: (p: Params) => ComponentChildren; admin?: boolean };

// The console's pages. An org's pages take :org; a workspace's take :ws.
const routes: Route[] = [
  { pattern: "/o/:org", render: (p) => <OrgHome org={p.org} /> },
  { pattern: "/o/:org/w/:ws/runtimes", render: () => <Runtimes /> },
  { pattern: "/o/:org/w/:ws/runtimes/:id", render: (p) => <RuntimePage id={p.id} tab="overview" /> },
  { pattern: "/o/:org/w/:ws/runtimes/:id/:tab", render: (p) => <RuntimePage id={p.id} tab={p.tab} /> },
  { pattern: "/o/:org/w/:ws/ledger", render: () => <Ledger /> },
  { pattern: "/o/:org/w/:ws/credits", render: () => <Credits /> },
  { pattern: "/o/:org/w/:ws/members", render: () => <Members /> },
  { pattern: "/o/:org/w/:ws/keys", render: () => <Keys /> },
  { pattern: "/o/:org/w/:ws/secrets", render: () => <Secrets /> },
  { pattern: "/o/:org/w/:ws/ssh-keys", render: () => <SSHKeys /> },
  { pattern: "/o/:org/w/:ws/admin/orgs", render: () => <Orgs />, admin: true },
  { pattern: "/o/:org/w/:ws/admin/providers", render: () => <Providers />, admin: true },
  { pattern: "/o/:org/w/:ws/admin/warm-pool", render: () => <WarmPool />, admin: true },
  { pattern: "/o/:org/w/:ws/admin/provisions", render: () => <Provisions />, admin: true },
];

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [trouble, setTrouble] = useState<ApiError | null>(null);
  const load = async () => {
    const s = await resume().catch((e) => {
      setTrouble(failed(e));
      return null;
    });
    if (!s) return setMe(null);
    try {
      setMe(must(await api.GET("/api/v1/me")));
    } catch (e) {
      setTrouble(failed(e));
      setMe(null);
    }
  };
  useEffect(() => {
    load();
    return onSignedOut(() => setMe(null));
  }, []);
  if (me === undefined) return <p class="loading" aria-live="polite">Loading…</p>;
  if (me === null) return <SignIn onSignedIn={load} trouble={trouble} />;
  return <Console me={me} onSignOut={() => setMe(null)} />;
}

// orgsOf lists the orgs me reaches: its memberships, or every org for the
// installation admin.
function useOrgs(me: Me) {
  return useAsync(async () => {
    if (!me.installation_admin) return me.memberships.map((m) => m.org);
    const l = must(await api.GET("/api/v1/orgs", { params: { query: { limit: 500 } } }));
    return (l.items ?? []).map((o) => o.name);
  }, [me]);
}

function Console({ me, onSignOut }: { me: Me; onSignOut: () => void }) {
  const { path } = useLocation();
  const orgs = useOrgs(me);
  const found = useMemo(() => {
    for (const r of routes) {
      const p = match(r.pattern, path);
      if (p) return { r, p };
    }
    return null;
  }, [path]);
  const org = found?.p.org ?? "";
  const wss = useAsync(async () => {
    if (!org) return [] as string[];
    const l = must(await api.GET("/api/v1/org/{org}/ws", { params: { path: { org }, query: { limit: 500 } } }));
    return (l.items ?? []).map((w) => w.name);
  }, [org]);
  // A path that names no page goes to the first workspace's runtimes.
  useEffect(() => {
    if (found) return;
    const first = orgs.data?.[0];
    if (first) navigate(`/o/${encodeURIComponent(first)}`, true);
  }, [found, orgs.data]);
  const role = roleIn(me, org);
  const scope: Scope = {
    me,
    org,
    ws: found?.p.ws ?? "",
    role,
    can: (need: Role) => atLeast(role, need),
    signOut: async () => {
      await signOut();
      onSignOut();
    },
  };
  return (
    <ScopeContext.Provider value={scope}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header scope={scope} orgs={orgs.data ?? []} wss={wss.data ?? []} />
      <div class="frame">
        <Nav scope={scope} />
        <main id="main" tabIndex={-1}>
          {found && (!found.r.admin || me.installation_admin) ? found.r.render(found.p) : <p>Choose an org.</p>}
        </main>
      </div>
    </ScopeContext.Provider>
  );
}

function Header({ scope, orgs, wss }: { scope: Scope; orgs: string[]; wss: string[] }) {
  const { me, org, ws } = scope;
  const who = me.user?.email || me.user?.wallet || me.user?.name || (me.installation_admin ? "installation admin" : me.credential);
  // Switching keeps the page kind where it can: runtimes of the new scope.
  const go = (o: string, w: string) => navigate(`/o/${encodeURIComponent(o)}/w/${encodeURIComponent(w)}/runtimes`);
  return (
    <header class="top" role="banner">
      <span class="brand">paddock</span>
      <label for="org-select">Org</label>
      <select id="org-select" value={org} onChange={(e) => navigate(`/o/${encodeURIComponent((e.target as HTMLSelectElement).value)}`)}>
        {!orgs.includes(org) && <option value={org}>{org || "—"}</option>}
        {orgs.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
      <label for="ws-select">Workspace</label>
      <select id="ws-select" value={ws} onChange={(e) => go(org, (e.target as HTMLSelectElement).value)}>
        {!wss.includes(ws) && <option value={ws}>{ws || "—"}</option>}
        {wss.map((w) => (
          <option value={w}>{w}</option>
        ))}
      </select>
      <span class="who" title={me.credential}>
        {who}
        {scope.role && <span class="role"> · {scope.role}</span>}
      </span>
      <button type="button" class="btn btn-plain" onClick={scope.signOut}>
        Sign out
      </button>
    </header>
  );
}

function Nav({ scope }: { scope: Scope }) {
  const { path } = useLocation();
  if (!scope.org) return <nav aria-label="Main" class="nav" />;
  const base = `/o/${encodeURIComponent(scope.org)}/w/${encodeURIComponent(scope.ws)}`;
  const item = (to: string, label: string) => (
    <li>
      <Link href={base + to} aria-current={path.startsWith(base + to) ? "page" : undefined}>
        {label}
      </Link>
    </li>
  );
  return (
    <nav aria-label="Main" class="nav">
      <ul>
        {item("/runtimes", "Runtimes")}
        {item("/ledger", "Sandbox ledger")}
        {item("/credits", "Credits")}
        {item("/members", "Members")}
        {item("/keys", "API keys")}
        {item("/secrets", "Org secrets")}
        {item("/ssh-keys", "SSH keys")}
      </ul>
      {scope.me.installation_admin && (
        <>
          <h2 class="nav-head">Installation</h2>
          <ul>
            {item("/admin/orgs", "Orgs")}
            {item("/admin/providers", "Providers")}
            {item("/admin/warm-pool", "Warm pool")}
            {item("/admin/provisions", "Provisions")}
          </ul>
        </>
      )}
    </nav>
  );
}

// OrgHome sends an org's URL on to the runtimes of its first workspace
// the principal may see (a key narrowed to a workspace: that one).
function OrgHome({ org }: { org: string }) {
  const { me } = useScope();
  const wss = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/ws", { params: { path: { org }, query: { limit: 500 } } }));
    return (l.items ?? []).map((w) => ({ id: w.id, name: w.name }));
  }, [org]);
  const list = wss.data;
  const narrowed = me.key?.workspace_id;
  const first = list?.find((w) => w.id === narrowed) ?? list?.[0];
  useEffect(() => {
    if (first) navigate(`/o/${encodeURIComponent(org)}/w/${encodeURIComponent(first.name)}/runtimes`, true);
  }, [first?.name, org]);
  if (wss.error) return <ErrorNote error={wss.error} />;
  if (list && list.length === 0) return <p>This org has no workspace you may see.</p>;
  return <p aria-live="polite">Loading…</p>;
}
