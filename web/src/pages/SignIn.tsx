import { useState, type FormEvent } from 'react';
import { Navigate, useNavigate } from 'react-router';
import { signIn } from '../api/client.ts';
import { ErrorNote } from '../components/ui.tsx';
import { useAction } from '../components/use-action.ts';
import { useSession } from '../session.tsx';

export function SignIn() {
  const { session, setSession } = useSession();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  if (session) return <Navigate to="/" replace />;
  async function submit(e: FormEvent) {
    e.preventDefault();
    await run(async () => {
      setSession(await signIn(email, password));
      navigate('/', { replace: true });
    });
  }
  return (
    <div className="auth-page">
      <form className="card auth" onSubmit={submit}>
        <h1>Sign in to adforge</h1>
        <label>
          Email
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
        </label>
        <label>
          Password
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="hint">No password yet? Open the one-time link your team owner (or the server's first start) gave you.</p>
      </form>
    </div>
  );
}
