import { useEffect, useState } from 'react';
import { gql } from '../api/client.ts';
import { ENGINES } from '../api/operations.ts';

interface OperationEngines {
  operation: string;
  kind: string;
  engines: string[];
  demo: boolean;
  demo_fallback: boolean;
  models: Array<{ model: string; engines: string[]; demo: boolean }>;
}

// Routes are fixed while the server runs: one question per page load.
let asked: Promise<OperationEngines[]> | undefined;
const engines = () => (asked ??= gql<{ engines: OperationEngines[] }>(ENGINES).then((d) => d.engines, (e: unknown) => ((asked = undefined), Promise.reject(e))));

/**
 * Says plainly when the built-in demo renderer (the `local` engine: the prompt's words on a
 * gradient, not AI) draws what this page makes: `operation` for a create form, every operation on
 * the gallery. Nothing when providers make it all (or the question fails: the page works without it).
 */
export function DemoBanner({ operation }: { operation?: string }) {
  const [plan, setPlan] = useState<OperationEngines[] | null>(null);
  useEffect(() => {
    let live = true;
    engines().then((p) => live && setPlan(p), () => {});
    return () => void (live = false);
  }, []);
  if (!plan) return null;
  const concerned = plan.filter((o) => o.demo && (!operation || o.operation === operation));
  if (concerned.length === 0) return null;
  const all = concerned.length === plan.length;
  const entry = operation ? concerned[0] : undefined;
  const things = entry?.kind === 'image' ? 'images' : 'videos';
  const byModel = (demo: boolean) => entry?.models.filter((m) => m.demo === demo).map((m) => m.model).join(' or ');
  const what = entry
    ? entry.engines[0] === 'local'
      ? `On this server, these ${things} are drawn by the built-in demo renderer${byModel(false) ? ` (unless the model is ${byModel(false)})` : ''}`
      : `On this server, these ${things} are drawn by the built-in demo renderer when the model is ${byModel(true)}`
    : all
      ? 'No AI provider is connected to this server: every image and video is drawn by the built-in demo renderer'
      : `Some operations on this server are drawn by the built-in demo renderer (${concerned.map((o) => o.operation).join(', ')})`;
  return (
    <div className="notice demo-banner" role="note" data-testid="demo-banner">
      <strong>Demo renderer, not AI.</strong> {what}: it writes the prompt on a gradient with a “DEMO RENDER” mark, to show the workflow end to end.{' '}
      For real AI, the operator sets a provider key and <code>ENGINE_ROUTES</code> (docs/providers.md in the adforge repository), or connects a ComfyUI server to run
      open models on their own GPU (docs/gpu.md).
    </div>
  );
}
