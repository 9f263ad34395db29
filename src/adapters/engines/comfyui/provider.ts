import { z } from 'zod';
import { defineProvider, budgetVariable } from '../provider.ts';
import { COMFYUI_OPERATIONS, SHIPPED_WORKFLOWS } from './workflows.ts';
import { COMFYUI_LIFECYCLE } from './comfyui-lifecycle.ts';

/** `host[:port]` or a URL, into a server root: no scheme means http, no port 8188 (ComfyUI's own default). */
function serverRoot(entry: string): string | undefined {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `http://${entry}`;
  try {
    const u = new URL(withScheme);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) && !u.port) u.port = '8188';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}

/** The ENGINE_ROUTES keys whose route names comfyui (each needs its workflow). */
export function comfyRouteKeys(routes: string | undefined): string[] {
  return (routes ?? '')
    .split(',')
    .map((pair) => pair.split('='))
    .filter(([, names]) => (names ?? '').split('|').some((n) => n.trim() === 'comfyui'))
    .map(([key]) => key!.trim())
    .filter(Boolean);
}

/** ComfyUI: open image and video models on the operator's own GPUs, through workflow templates. */
export const comfyuiProvider = defineProvider({
  name: 'comfyui',
  keyVariable: 'COMFYUI_URL',
  env: {
    COMFYUI_URL: z
      .string()
      .optional()
      .transform((raw, ctx) => {
        const entries = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
        const urls = entries.map((e) => serverRoot(e));
        const bad = entries.filter((_, i) => !urls[i]);
        if (bad.length) ctx.addIssue({ code: 'custom', message: `${bad.map((b) => `"${b}"`).join(', ')} is not an http(s) URL or host[:port]` });
        return urls.length ? [...new Set(urls.filter((u): u is string => Boolean(u)))] : undefined;
      }),
    COMFYUI_WORKFLOWS: z.string().min(1).default(SHIPPED_WORKFLOWS),
    COMFYUI_TIMEOUT_SECONDS: z.coerce.number().min(1).max(3600).default(120),
    /** How often its jobs may be read, `<requests>/<seconds>[,...]`: a ComfyUI server is the operator's own and documents no limit: a pace that leaves it room to work. */
    COMFYUI_POLL_BUDGET: budgetVariable('20/1'),
  },
  // ENGINE_ROUTES is the service's variable: the whole parsed environment is passed here, and the
  // keys routed to comfyui are kept so that the start checks each one's workflow.
  settings: (e) => ({
    pollBudget: e.COMFYUI_POLL_BUDGET,
    urls: Object.freeze(e.COMFYUI_URL!),
    workflowsDir: e.COMFYUI_WORKFLOWS,
    timeoutMs: e.COMFYUI_TIMEOUT_SECONDS * 1000,
    routeKeys: Object.freeze(comfyRouteKeys((e as { ENGINE_ROUTES?: string }).ENGINE_ROUTES)),
  }),
  makes: { operations: COMFYUI_OPERATIONS, models: [], limits: {} },
  // A GPU server sits on the operator's own network: its addresses come from COMFYUI_URL alone (no
  // request names one), so they are reached without opening ALLOW_PRIVATE_NETWORK_URLS to every user URL.
  lifecycle: COMFYUI_LIFECYCLE,
  create: async (s, shared) => (await import('./comfyui-engine.ts')).createComfyUiEngine({ ...s, ...shared, allowPrivate: true }),
});
