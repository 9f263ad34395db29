import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { currentSession, whenSignedOut, type SessionView } from './api/client.ts';

interface SessionState {
  session: SessionView | null;
  loading: boolean;
  setSession: (s: SessionView | null) => void;
}

const SessionContext = createContext<SessionState>({ session: null, loading: true, setSession: () => {} });

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<SessionView | null>(null);
  const [loading, setLoading] = useState(true);
  useEffect(() => {
    currentSession()
      .then(setSession)
      .catch(() => setSession(null))
      .finally(() => setLoading(false));
    // A request answered 401 (signed out elsewhere, expired): back to the sign-in page.
    return whenSignedOut(() => setSession(null));
  }, []);
  return <SessionContext.Provider value={{ session, loading, setSession }}>{children}</SessionContext.Provider>;
}

export const useSession = () => useContext(SessionContext);
export const isOwner = (s: SessionView | null) => s?.user.role === 'owner';
