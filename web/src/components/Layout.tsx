import { useState } from 'react';
import { NavLink, Outlet } from 'react-router';
import { signOut } from '../api/client.ts';
import { isOwner, useSession } from '../session.tsx';
import { ErrorNote } from './ui.tsx';

export function Layout() {
  const { session } = useSession();
  const [menuOpen, setMenuOpen] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const owner = isOwner(session);
  const close = () => setMenuOpen(false);
  return (
    <div className="shell">
      <header className="topbar">
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <span className="brand">adforge</span>
        <span className="team">{session?.team.name}</span>
        <span className="grow" />
        <span className="who">{session?.user.email}</span>
        <button type="button" className="secondary" onClick={() => signOut().catch(setError)}>
          Sign out
        </button>
      </header>
      <nav id="nav" className={menuOpen ? 'open' : ''} aria-label="Main">
        <NavLink to="/" end onClick={close}>Generations</NavLink>
        <NavLink to="/create" onClick={close}>Create</NavLink>
        <NavLink to="/campaigns" onClick={close}>Campaigns</NavLink>
        <NavLink to="/ad-library" onClick={close}>Ad library</NavLink>
        <NavLink to="/credits" onClick={close}>Credits</NavLink>
        <span className="nav-heading">Library</span>
        <NavLink to="/products" onClick={close}>Products</NavLink>
        <NavLink to="/brands" onClick={close}>Brands</NavLink>
        <NavLink to="/avatars" onClick={close}>Avatars</NavLink>
        <span className="nav-heading">Settings</span>
        {owner && <NavLink to="/settings/api-keys" onClick={close}>API keys</NavLink>}
        <NavLink to="/settings/members" onClick={close}>Members</NavLink>
        <NavLink to="/settings/data" onClick={close}>Team data</NavLink>
        {owner && <NavLink to="/settings/audit-log" onClick={close}>Audit log</NavLink>}
        <NavLink to="/settings/account" onClick={close}>Account</NavLink>
        <span className="nav-heading">Developers</span>
        <a href="/graphql">GraphiQL</a>
        <a href="/docs">REST reference</a>
      </nav>
      <main>
        <ErrorNote error={error} />
        <Outlet />
      </main>
    </div>
  );
}
