// The overview tab: a runtime's fields, and what went wrong applying its
// capabilities.
import type { ComponentChildren } from "preact";
import { Time } from "../../ui";
import { credits, networkMode, Status, type Runtime } from "./common";

// Prop is one term and its value in a dl.props.
export function Prop({ term, children }: { term: string; children?: ComponentChildren }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children ?? <span class="muted">—</span>}</dd>
    </>
  );
}

// seconds shows a duration in seconds, "—" when unset.
export function seconds(s?: number) {
  if (!s) return undefined;
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

// Overview is the runtime's fields and its capability problems.
export function Overview({ rt }: { rt: Runtime }) {
  const c = rt.config;
  return (
    <>
      <dl class="props">
        <Prop term="Project">{rt.project_name}</Prop>
        <Prop term="Runtime id">
          <code>{rt.id}</code>
        </Prop>
        <Prop term="Status">
          <Status status={rt.status} />
        </Prop>
        <Prop term="Status reason">{rt.status_reason || undefined}</Prop>
        <Prop term="Pause reason">{rt.pause_reason || undefined}</Prop>
        <Prop term="Current sandbox">{rt.current_sandbox_id ? <code>{rt.current_sandbox_id}</code> : undefined}</Prop>
        <Prop term="Expires">
          <Time at={rt.expires_at} />
        </Prop>
        <Prop term="Provider">{c.provider}</Prop>
        <Prop term="Image">{c.image ? <code>{c.image}</code> : undefined}</Prop>
        <Prop term="CPU">{c.cpu_millis ? `${c.cpu_millis / 1000} cores` : undefined}</Prop>
        <Prop term="Memory">{c.memory_mb ? `${c.memory_mb} MiB` : undefined}</Prop>
        <Prop term="Disk">{c.disk_mb ? `${c.disk_mb} MiB` : undefined}</Prop>
        <Prop term="Network">{networkMode(rt)}</Prop>
        <Prop term="Idle timeout">{seconds(c.idle_timeout_seconds)}</Prop>
        <Prop term="Archive after">{seconds(c.archive_after_seconds)}</Prop>
        <Prop term="Root filesystem">{c.rootfs}</Prop>
        <Prop term="User">{c.user}</Prop>
        <Prop term="Credits per hour">{credits(rt.credits_per_hour)}</Prop>
        <Prop term="Created">
          <Time at={rt.created_at} />
        </Prop>
        <Prop term="Updated">
          <Time at={rt.updated_at} />
        </Prop>
      </dl>
      <h2>Capability problems</h2>
      {rt.capability_problems?.length ? (
        <ul class="problems">
          {rt.capability_problems.map((p) => (
            <li class="error">{p}</li>
          ))}
        </ul>
      ) : (
        <p class="muted">None.</p>
      )}
    </>
  );
}
