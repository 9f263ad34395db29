import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { followLink } from '../api/client.ts';
import { ErrorNote } from '../components/ui.tsx';
import { useAction } from '../components/use-action.ts';
import { useSession } from '../session.tsx';

/** The one-time link's page: the token is in the fragment, which never reaches a server log. */
export function Welcome() {
  const { setSession } = useSession();
  const navigate = useNavigate();
  const [token] = useState(() => location.hash.slice(1));
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const { busy, error, setError, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (password !== again) return setError(new Error('The two passwords differ'));
    await run(async () => {
      const s = await followLink(token, password);
      history.replaceState(null, '', '/welcome');
      setSession(s);
      navigate('/', { replace: true });
    });
  }
  return (
    <div className="auth-page">
      <form className="card auth" onSubmit={submit}>
        <h1>Welcome to adforge</h1>
        {!token ? (
          <p className="error" role="alert">This page needs the one-time link you were given: open the whole link.</p>
        ) : (
          <>
            <p>Choose a password (at least 10 characters) to finish signing in.</p>
            <label>
              New password
              <input type="password" autoComplete="new-password" minLength={10} maxLength={200} required value={password} onChange={(e) => setPassword(e.target.value)} autoFocus />
            </label>
            <label>
              The same again
              <input type="password" autoComplete="new-password" minLength={10} maxLength={200} required value={again} onChange={(e) => setAgain(e.target.value)} />
            </label>
            <ErrorNote error={error} />
            <button type="submit" disabled={busy}>
              {busy ? 'Signing in…' : 'Set password and sign in'}
            </button>
          </>
        )}
      </form>
    </div>
  );
}
