// The org's members and their roles, its pending invitations, and the
// current workspace's members. Controls show only to an admin; an owner
// may also grant owner.
import { useEffect, useState } from "preact/hooks";
import { api, must, type Schemas } from "../../api/client";
import { useScope, type Role } from "../../session";
import { Button, Field, Page, Section, Time, useAsync } from "../../ui";
import { ActionForm, Note, SelectField, value } from "../../ui/form";
import { Listed, Table } from "../../ui/table";
import { RoleOptions } from "./common";

type OrgMember = Schemas["OrgMember"];

export function Members() {
  const { org, ws, can } = useScope();
  // An add that is not an invitation (201) changes the members' list.
  const [added, setAdded] = useState(0);
  return (
    <Page title="Members">
      <OrgMembers org={org} admin={can("admin")} owner={can("owner")} added={added} />
      {can("admin") && <Invitations org={org} owner={can("owner")} onAdded={() => setAdded((n) => n + 1)} />}
      {ws && <WorkspaceMembers org={org} ws={ws} admin={can("admin")} />}
    </Page>
  );
}

// OrgMembers is the table of the org's members, with role and removal.
function OrgMembers({ org, admin, owner, added }: { org: string; admin: boolean; owner: boolean; added: number }) {
  const list = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/members", { params: { path: { org }, query: { limit: 500 } } }));
    return l.items ?? [];
  }, [org, added]);
  return (
    <Section id="org-members-h" heading={`Members of ${org}`}>
      <Listed list={list} empty="No members.">
        {(members) => (
          <Table label="Org members" cols={["Member", "Role", "Since", admin && "Actions"]}>
            {members.map((m) => (
              <MemberRow key={m.id} org={org} m={m} admin={admin} owner={owner} reload={list.reload} />
            ))}
          </Table>
        )}
      </Listed>
    </Section>
  );
}

function MemberRow(props: { org: string; m: OrgMember; admin: boolean; owner: boolean; reload: () => void }) {
  const { org, m, admin, owner, reload } = props;
  const path = { org, member: m.user_id };
  const setRole = async (role: Role) => {
    must(await api.PATCH("/api/v1/org/{org}/members/{member}", { params: { path }, body: { role } }));
    reload();
  };
  // Changing an owner, or granting owner, needs an owner.
  const canChange = admin && (owner || m.role !== "owner");
  return (
    <tr data-member={m.member}>
      <td>{m.member}</td>
      <td>{canChange ? <RoleControl m={m} owner={owner} onChange={setRole} /> : m.role}</td>
      <td>
        <Time at={m.created_at} />
      </td>
      {admin && (
        <td>
          {canChange && (
            <Button
              kind="danger"
              aria-label={`Remove ${m.member}`}
              confirm={`Remove ${m.member} from ${org}? Their keys in the org are revoked.`}
              onClick={async () => {
                must(await api.DELETE("/api/v1/org/{org}/members/{member}", { params: { path } }));
                reload();
              }}
            >
              Remove
            </Button>
          )}
        </td>
      )}
    </tr>
  );
}

// RoleControl picks a role and saves it with its own button, so moving
// through the options with the keyboard changes nothing by itself.
function RoleControl({ m, owner, onChange }: { m: OrgMember; owner: boolean; onChange: (r: Role) => Promise<void> }) {
  const [role, setRole] = useState<string>(m.role);
  useEffect(() => setRole(m.role), [m.role]);
  return (
    <span class="button-wrap">
      <select aria-label={`Role of ${m.member}`} value={role} onChange={(e) => setRole(value(e))}>
        <RoleOptions owner={owner || m.role === "owner"} />
      </select>
      {role !== m.role && (
        <Button kind="primary" aria-label={`Save the role of ${m.member}`} onClick={() => onChange(role as Role)}>
          Save
        </Button>
      )}
    </span>
  );
}

// Invitations lists the org's pending invitations, invites, revokes.
function Invitations({ org, owner, onAdded }: { org: string; owner: boolean; onAdded: () => void }) {
  const list = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/invitations", { params: { path: { org }, query: { limit: 500 } } }));
    return l.items ?? [];
  }, [org]);
  return (
    <Section id="invitations-h" heading="Invitations">
      <InviteForm org={org} owner={owner} onInvited={list.reload} onAdded={onAdded} />
      <Listed list={list} empty="No pending invitations.">
        {(invitations) => (
          <Table label="Invitations" cols={["Invited", "Role", "By", "Expires", "Actions"]}>
            {invitations.map((i) => {
              const who = i.email || i.wallet || "";
              return (
                <tr data-invitation={i.id}>
                  <td>{who}</td>
                  <td>{i.role}</td>
                  <td>{i.inviter}</td>
                  <td>
                    <Time at={i.expires_at} />
                  </td>
                  <td>
                    {(owner || i.role !== "owner") && (
                      <Button
                        kind="danger"
                        aria-label={`Revoke the invitation of ${who}`}
                        confirm={`Revoke the invitation of ${who}?`}
                        onClick={async () => {
                          must(await api.DELETE("/api/v1/org/{org}/invitations/{invitation}", { params: { path: { org, invitation: i.id } } }));
                          list.reload();
                        }}
                      >
                        Revoke
                      </Button>
                    )}
                  </td>
                </tr>
              );
            })}
          </Table>
        )}
      </Listed>
    </Section>
  );
}

// InviteForm invites an email or wallet address with a role; where the
// server adds members directly (201), says so.
function InviteForm(props: { org: string; owner: boolean; onInvited: () => void; onAdded: () => void }) {
  const { org, owner, onInvited, onAdded } = props;
  const [member, setMember] = useState("");
  const [role, setRole] = useState<string>("member");
  const [done, setDone] = useState("");
  const submit = async () => {
    setDone("");
    const a = await api.POST("/api/v1/org/{org}/members", { params: { path: { org } }, body: { member: member.trim(), role: role as Role } });
    must(a);
    const added = a.response.status === 201;
    setDone(added ? `${member} is now a member.` : `${member} is invited.`);
    setMember("");
    if (added) onAdded();
    else onInvited();
  };
  return (
    <>
      <ActionForm label="Invite to the org" submit="Invite" onSubmit={submit}>
        <Field label="Email or wallet address" id="invite-member" required value={member} onInput={(e) => setMember(value(e))} />
        <SelectField label="Role" id="invite-role" value={role} onChange={(e) => setRole(value(e))}>
          <RoleOptions owner={owner} />
        </SelectField>
      </ActionForm>
      {done && <Note>{done}</Note>}
    </>
  );
}

// WorkspaceMembers lists the current workspace's members; an admin adds
// a member of the org or removes one.
function WorkspaceMembers({ org, ws, admin }: { org: string; ws: string; admin: boolean }) {
  const path = { org, workspace: ws };
  const list = useAsync(async () => {
    const l = must(await api.GET("/api/v1/org/{org}/ws/{workspace}/members", { params: { path, query: { limit: 500 } } }));
    return l.items ?? [];
  }, [org, ws]);
  const [member, setMember] = useState("");
  return (
    <Section id="ws-members-h" heading={`Members of workspace ${ws}`}>
      {admin && (
        <ActionForm
          label={`Add to workspace ${ws}`}
          submit="Add"
          onSubmit={async () => {
            must(await api.POST("/api/v1/org/{org}/ws/{workspace}/members", { params: { path }, body: { member: member.trim() } }));
            setMember("");
            list.reload();
          }}
        >
          <Field label="Member of the org" id="ws-member" required value={member} onInput={(e) => setMember(value(e))} />
        </ActionForm>
      )}
      <Listed list={list} empty="No members in this workspace.">
        {(members) => (
          <ul class="plain-list" aria-label={`Members of workspace ${ws}`}>
            {members.map((m) => (
              <li>
                {m.member}{" "}
                {admin && (
                  <Button
                    kind="danger"
                    aria-label={`Remove ${m.member} from workspace ${ws}`}
                    confirm={`Remove ${m.member} from workspace ${ws}? They stay in the org.`}
                    onClick={async () => {
                      must(await api.DELETE("/api/v1/org/{org}/ws/{workspace}/members/{member}", { params: { path: { ...path, member: m.user_id } } }));
                      list.reload();
                    }}
                  >
                    Remove
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
      </Listed>
    </Section>
  );
}
