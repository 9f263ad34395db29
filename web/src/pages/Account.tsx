import { useState } from 'react';
import { signOut } from '../api/client.ts';
import { Confirm, ErrorNote } from '../components/ui.tsx';
import { useSession } from '../session.tsx';

export function Account() {
  const { session } = useSession();
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <section>
      <h1>Account</h1>
      <dl className="facts card">
        <dt>Email</dt>
        <dd>{session?.user.email}</dd>
        <dt>Role</dt>
        <dd>{session?.user.role}</dd>
        <dt>Team</dt>
        <dd>
          {session?.team.name} ({session?.team.tier})
        </dd>
      </dl>
      <h2>Sessions</h2>
      <p>Lost a laptop, or signed in on a shared computer? End every session of yours, here included.</p>
      <button type="button" className="danger" onClick={() => setConfirm(true)}>
        Sign out everywhere
      </button>
      <ErrorNote error={error} />
      <Confirm open={confirm} title="Sign out everywhere?" confirmLabel="Sign out everywhere" danger onCancel={() => setConfirm(false)} onConfirm={() => (setConfirm(false), signOut(true).catch(setError))}>
        <p>Every browser signed in as you must sign in again.</p>
      </Confirm>
    </section>
  );
}
