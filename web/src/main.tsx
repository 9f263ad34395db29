import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { Layout } from './components/Layout.tsx';
import { Spinner } from './components/ui.tsx';
import { Account } from './pages/Account.tsx';
import { ApiKeys } from './pages/ApiKeys.tsx';
import { Create } from './pages/create/Create.tsx';
import { Credits } from './pages/Credits.tsx';
import { GenerationDetail } from './pages/GenerationDetail.tsx';
import { Generations } from './pages/Generations.tsx';
import { Members } from './pages/Members.tsx';
import { AuditLog } from './pages/settings/AuditLog.tsx';
import { TeamData } from './pages/settings/TeamData.tsx';
import { Avatars, Brands, Products } from './pages/library/Library.tsx';
import { AdLibrary, AdLibraryBrand } from './pages/ad-library/AdLibrary.tsx';
import { Campaigns } from './pages/campaigns/Campaigns.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { Welcome } from './pages/Welcome.tsx';
import { isOwner, SessionProvider, useSession } from './session.tsx';
import './app.css';

function SignedIn({ children }: { children: ReactNode }) {
  const { session, loading } = useSession();
  if (loading) return <Spinner />;
  return session ? children : <Navigate to="/sign-in" replace />;
}

function OwnersOnly({ children }: { children: ReactNode }) {
  const { session } = useSession();
  if (isOwner(session)) return children;
  return (
    <section>
      <h1>Owners only</h1>
      <p>API keys and webhooks are managed by your team's owners. Ask one of them (see Members).</p>
    </section>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>Nothing lives at this address. Use the menu to find your way.</p>
    </section>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SessionProvider>
      <BrowserRouter>
        <Routes>
          <Route path="/sign-in" element={<SignIn />} />
          <Route path="/welcome" element={<Welcome />} />
          <Route
            element={
              <SignedIn>
                <Layout />
              </SignedIn>
            }
          >
            <Route index element={<Generations />} />
            <Route path="generations/:id" element={<GenerationDetail />} />
            <Route path="create" element={<Create />} />
            <Route path="create/:type" element={<Create />} />
            <Route path="credits" element={<Credits />} />
            <Route path="products" element={<Products />} />
            <Route path="brands" element={<Brands />} />
            <Route path="avatars" element={<Avatars />} />
            <Route path="ad-library" element={<AdLibrary />} />
            <Route path="ad-library/:id" element={<AdLibraryBrand />} />
            <Route path="campaigns" element={<Campaigns />} />
            <Route
              path="settings/api-keys"
              element={
                <OwnersOnly>
                  <ApiKeys />
                </OwnersOnly>
              }
            />
            <Route path="settings/members" element={<Members />} />
            <Route path="settings/account" element={<Account />} />
            <Route path="settings/data" element={<TeamData />} />
            <Route path="settings/audit-log" element={<AuditLog />} />
            <Route path="*" element={<NotFound />} />
          </Route>
        </Routes>
      </BrowserRouter>
    </SessionProvider>
  </StrictMode>,
);
