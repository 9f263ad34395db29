import { when } from './ui.tsx';

export interface Delivery {
  id: string;
  event: string;
  ok: boolean;
  status_code: number | null;
  attempted_at: string;
  error: string | null;
  url?: string;
  latency_ms?: number;
}

/** Webhook attempts: when, what, (where,) and what the receiver said. */
export function DeliveryTable({ deliveries, showUrl = false }: { deliveries: Delivery[]; showUrl?: boolean }) {
  return (
    <table>
      <thead>
        <tr>
          <th>When</th>
          <th>Event</th>
          {showUrl && <th>To</th>}
          <th>Outcome</th>
          {!showUrl && <th>Time</th>}
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.id}>
            <td>{when(d.attempted_at)}</td>
            <td>{d.event}</td>
            {showUrl && <td>{d.url}</td>}
            <td>{d.ok ? `delivered (${d.status_code})` : `failed: ${d.error ?? d.status_code}`}</td>
            {!showUrl && <td>{d.latency_ms} ms</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
