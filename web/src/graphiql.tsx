import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import './graphiql.css';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { currentSession } from './api/client.ts';

// GraphiQL from its npm package, served by our server under our CSP: nothing loads from a CDN.
// Signed in to the dashboard, it runs as you (the session cookie and its CSRF token); otherwise
// put `{"Authorization": "Bearer service_sk_..."}` in the Headers tab.
async function start() {
  const session = await currentSession().catch(() => null);
  const csrf = session?.csrf_token;
  const fetcher = createGraphiQLFetcher({
    url: '/graphql',
    subscriptionUrl: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
    headers: csrf ? { 'x-csrf-token': csrf } : {},
    wsConnectionParams: csrf ? { csrfToken: csrf } : {},
  });
  const example = session ? '# Signed in as ' + session.user.email + '\n{\n  viewer { email role team_name }\n  credits { credits_remaining }\n}\n' : '# Add {"Authorization": "Bearer <your API key>"} under Headers, or sign in to the dashboard first.\n{\n  credits { credits_remaining }\n}\n';
  createRoot(document.getElementById('graphiql')!).render(
    <StrictMode>
      <GraphiQL fetcher={fetcher} defaultQuery={example} />
    </StrictMode>,
  );
}

void start();
