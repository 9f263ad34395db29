import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { gql, unwrap } from '../api/client.ts';
import { API_KEYS, CREATE_API_KEY, KEY_DELIVERIES, REVOKE_API_KEY, ROTATE_WEBHOOK_SECRET, SEND_TEST_WEBHOOK, SET_API_KEY_WEBHOOK } from '../api/operations.ts';
import { DeliveryTable, type Delivery } from '../components/DeliveryTable.tsx';
import { Confirm, Empty, ErrorNote, Secret, Spinner, when } from '../components/ui.tsx';
import { useAction } from '../components/use-action.ts';

interface ApiKey {
  id: string;
  name: string;
  hint: string;
  webhook_url: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

type Shown = { title: string; key?: string; webhook_secret: string };

export function ApiKeys() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [shown, setShown] = useState<Shown | null>(null);
  const load = useCallback(() => gql<{ apiKeys: ApiKey[] }>(API_KEYS).then((d) => setKeys(d.apiKeys), setError), []);
  useEffect(() => void load(), [load]);

  return (
    <section>
      <h1>API keys</h1>
      <p className="lead">Keys let your own code call the REST API (/api/v1) and GraphQL. Each key has its webhook URL, where adforge reports finished generations.</p>
      <CreateKey
        onCreated={(k) => {
          setShown({ title: `Key “${k.api_key.name || k.api_key.hint}” created`, key: k.key, webhook_secret: k.webhook_secret });
          void load();
        }}
      />
      {shown && (
        <div className="card shown" role="status">
          <h3>{shown.title}</h3>
          <p>Copy it now: it is shown only this once.</p>
          {shown.key && <Secret label="API key" value={shown.key} />}
          <Secret label="Webhook secret" value={shown.webhook_secret} />
          <button type="button" className="secondary" onClick={() => setShown(null)}>
            Done
          </button>
        </div>
      )}
      <ErrorNote error={error} />
      {keys === null ? (
        <Spinner />
      ) : keys.length === 0 ? (
        <Empty title="No API keys yet">
          <p>Create one above, then call the API with the header Authorization: Bearer followed by the key.</p>
        </Empty>
      ) : (
        <ul className="key-list">
          {keys.map((k) => (
            <KeyRow key={k.id} apiKey={k} onChanged={load} onSecret={setShown} />
          ))}
        </ul>
      )}
    </section>
  );
}

function CreateKey({ onCreated }: { onCreated: (k: { key: string; webhook_secret: string; api_key: ApiKey }) => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const { busy, error, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    await run(async () => {
      const r = await gql<{ createApiKey: any }>(CREATE_API_KEY, { name, webhook_url: url.trim() || null });
      onCreated(unwrap(r.createApiKey));
      setName('');
      setUrl('');
    });
  }
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="New API key">
      <label>
        Name
        <input value={name} maxLength={100} placeholder="e.g. Zapier, staging" onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Webhook URL (optional)
        <input type="url" value={url} placeholder="https://example.com/adforge-hook" onChange={(e) => setUrl(e.target.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Create key
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

function KeyRow({ apiKey: k, onChanged, onSecret }: { apiKey: ApiKey; onChanged: () => void; onSecret: (s: Shown) => void }) {
  const { error, run } = useAction();
  const [confirm, setConfirm] = useState<'revoke' | 'rotate' | null>(null);
  const [editing, setEditing] = useState(false);
  const [url, setUrl] = useState(k.webhook_url ?? '');
  const [note, setNote] = useState<string | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const label = k.name || 'Unnamed key';
  const act = (f: () => Promise<void>) => {
    setNote(null);
    return run(f);
  };
  const showDeliveries = () => act(async () => setDeliveries((await gql<{ apiKeyDeliveries: { items: Delivery[] } }>(KEY_DELIVERIES, { id: k.id, limit: 20 })).apiKeyDeliveries.items));
  return (
    <li className={`card key ${k.revoked_at ? 'revoked' : ''}`} data-testid="api-key">
      <div className="row wrap">
        <strong>{label}</strong>
        <code>{k.hint}</code>
        {k.revoked_at ? <span className="badge failed">revoked {when(k.revoked_at)}</span> : <span className="badge completed">active</span>}
      </div>
      <dl className="facts">
        <dt>Created</dt>
        <dd>{when(k.created_at)}</dd>
        <dt>Last used</dt>
        <dd>{k.last_used_at ? when(k.last_used_at) : 'never'}</dd>
        <dt>Webhook URL</dt>
        <dd>{k.webhook_url ?? 'none'}</dd>
      </dl>
      {!k.revoked_at && (
        <>
          {editing ? (
            <form
              className="row wrap"
              onSubmit={(e) => {
                e.preventDefault();
                void act(async () => {
                  unwrap((await gql<{ setApiKeyWebhook: any }>(SET_API_KEY_WEBHOOK, { id: k.id, url: url.trim() || null })).setApiKeyWebhook);
                  setEditing(false);
                  onChanged();
                });
              }}
            >
              <label className="grow">
                Webhook URL for {label}
                <input type="url" value={url} placeholder="empty: no webhooks" onChange={(e) => setUrl(e.target.value)} autoFocus />
              </label>
              <button type="submit">Save</button>
              <button type="button" className="secondary" onClick={() => setEditing(false)}>
                Cancel
              </button>
            </form>
          ) : (
            <div className="row wrap actions">
              <button type="button" className="secondary" onClick={() => setEditing(true)}>
                {k.webhook_url ? 'Change webhook URL' : 'Set webhook URL'}
              </button>
              <button
                type="button"
                className="secondary"
                disabled={!k.webhook_url}
                onClick={() =>
                  act(async () => {
                    const d = unwrap((await gql<{ sendApiKeyTestWebhook: any }>(SEND_TEST_WEBHOOK, { id: k.id })).sendApiKeyTestWebhook) as Delivery;
                    setNote(d.ok ? `Test event delivered (HTTP ${d.status_code})` : `Test event not delivered: ${d.error ?? `HTTP ${d.status_code}`}`);
                    if (deliveries) void showDeliveries();
                  })
                }
              >
                Send test event
              </button>
              <button type="button" className="secondary" onClick={showDeliveries}>
                Delivery log
              </button>
              <button type="button" className="secondary" onClick={() => setConfirm('rotate')}>
                Rotate webhook secret
              </button>
              <button type="button" className="danger" onClick={() => setConfirm('revoke')}>
                Revoke
              </button>
            </div>
          )}
        </>
      )}
      {note && <p role="status">{note}</p>}
      <ErrorNote error={error} />
      {deliveries && (
        <div className="deliveries">
          <h4>Webhook deliveries</h4>
          {deliveries.length === 0 ? (
            <p className="hint">Nothing sent yet: a finished generation made with this key, or a test event, shows here.</p>
          ) : (
            <DeliveryTable deliveries={deliveries} />
          )}
        </div>
      )}
      <Confirm
        open={confirm === 'revoke'}
        title={`Revoke ${label}?`}
        confirmLabel="Revoke key"
        danger
        onCancel={() => setConfirm(null)}
        onConfirm={() =>
          act(async () => {
            setConfirm(null);
            unwrap((await gql<{ revokeApiKey: any }>(REVOKE_API_KEY, { id: k.id })).revokeApiKey);
            onChanged();
          })
        }
      >
        <p>Every request with this key is refused (401) from now on, on every server. This cannot be undone.</p>
      </Confirm>
      <Confirm
        open={confirm === 'rotate'}
        title={`New webhook secret for ${label}?`}
        confirmLabel="Rotate secret"
        onCancel={() => setConfirm(null)}
        onConfirm={() =>
          act(async () => {
            setConfirm(null);
            const r = unwrap((await gql<{ rotateApiKeyWebhookSecret: any }>(ROTATE_WEBHOOK_SECRET, { id: k.id })).rotateApiKeyWebhookSecret) as { webhook_secret: string };
            onSecret({ title: `New webhook secret for ${label}`, webhook_secret: r.webhook_secret });
          })
        }
      >
        <p>The old secret stops verifying at once: update your receiver with the new one.</p>
      </Confirm>
    </li>
  );
}
