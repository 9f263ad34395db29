import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { gql, unwrap } from '../api/client.ts';
import { INVITE_MEMBER, MEMBERS, REMOVE_MEMBER, SET_MEMBER_ROLE } from '../api/operations.ts';
import { Confirm, ErrorNote, Secret, Spinner, when } from '../components/ui.tsx';
import { useAction } from '../components/use-action.ts';
import { isOwner, useSession } from '../session.tsx';

interface Member {
  id: string;
  email: string;
  role: 'owner' | 'member';
  active: boolean;
  created_at: string;
}

export function Members() {
  const { session } = useSession();
  const owner = isOwner(session);
  const [members, setMembers] = useState<Member[] | null>(null);
  const { error, setError, run: act } = useAction();
  const [invite, setInvite] = useState<{ url: string; email: string; expires_at: string } | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const load = useCallback(() => gql<{ members: Member[] }>(MEMBERS).then((d) => setMembers(d.members), setError), []);
  useEffect(() => void load(), [load]);
  return (
    <section>
      <h1>Members</h1>
      <p className="lead">Owners manage keys, webhooks, members and credits; members create and view.</p>
      {owner && <InviteForm onInvited={(i) => (setInvite(i), void load())} />}
      {invite && (
        <div className="card shown" role="status">
          <h3>Invitation for {invite.email}</h3>
          <p>No mail is sent: pass this one-time link on. It works once, until {when(invite.expires_at)}.</p>
          <Secret label="Invitation link" value={invite.url} />
          <button type="button" className="secondary" onClick={() => setInvite(null)}>
            Done
          </button>
        </div>
      )}
      <ErrorNote error={error} />
      {members === null ? (
        <Spinner />
      ) : (
        <table className="members">
          <thead>
            <tr>
              <th>Email</th>
              <th>Role</th>
              <th>Status</th>
              <th>Since</th>
              {owner && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.id}>
                <td>{m.email}</td>
                <td>
                  {owner && m.id !== session?.user.id ? (
                    <select
                      aria-label={`Role of ${m.email}`}
                      value={m.role}
                      onChange={(e) => act(async () => (unwrap((await gql<{ setMemberRole: any }>(SET_MEMBER_ROLE, { id: m.id, role: e.target.value })).setMemberRole), void load()))}
                    >
                      <option value="member">member</option>
                      <option value="owner">owner</option>
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                <td>{m.active ? 'active' : 'invited'}</td>
                <td>{when(m.created_at)}</td>
                {owner && (
                  <td>
                    {m.id !== session?.user.id && (
                      <button type="button" className="danger" onClick={() => setRemoving(m)}>
                        Remove
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Confirm
        open={removing !== null}
        title={`Remove ${removing?.email}?`}
        confirmLabel="Remove"
        danger
        onCancel={() => setRemoving(null)}
        onConfirm={() =>
          act(async () => {
            const m = removing!;
            setRemoving(null);
            unwrap((await gql<{ removeMember: any }>(REMOVE_MEMBER, { id: m.id })).removeMember);
            void load();
          })
        }
      >
        <p>They are signed out everywhere at once. What they made stays with the team.</p>
      </Confirm>
    </section>
  );
}

function InviteForm({ onInvited }: { onInvited: (i: { url: string; email: string; expires_at: string }) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'owner'>('member');
  const { error, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    await run(async () => {
      const r = unwrap((await gql<{ inviteMember: any }>(INVITE_MEMBER, { email, role })).inviteMember) as { url: string; expires_at: string; member: Member };
      onInvited({ url: r.url, email: r.member.email, expires_at: r.expires_at });
      setEmail('');
    });
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Invite a member">
      <label>
        Email
        <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => setRole(e.target.value as 'member' | 'owner')}>
          <option value="member">member</option>
          <option value="owner">owner</option>
        </select>
      </label>
      <button type="submit">Invite</button>
      <ErrorNote error={error} />
    </form>
  );
}
