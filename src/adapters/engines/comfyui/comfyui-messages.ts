/*
 * ComfyUI's words, cut to what a user may read. ComfyUI's answers carry the server's own
 * details: validate_prompt's `details` hold the COMBO lists (every model file name on the server)
 * and Python exception text (execution.py @ 04e2a91 validate_inputs, validate_prompt), and an
 * execution_error carries a traceback, the server's paths and, for some errors, several lines of
 * tips (execution.py execute: exception_message is "{ex}\n{tips}"). The generation's error keeps
 * the message and the input's name; the whole text goes to the operator's log.
 */

const MAX_WORDS = 300;

type ComfyErrorBody = {
  error?: unknown;
  node_errors?: Record<string, { class_type?: string; errors?: Array<{ message?: string; details?: string; extra_info?: { input_name?: unknown } }> }> | unknown[];
};

/** One line, absolute paths cut to their file name, at most `max` characters. */
export function oneLine(text: string, max = 200): string {
  const first = text.split(/\r?\n/).map((l) => l.trim()).find(Boolean) ?? '';
  const scrubbed = first.replace(/(?<=^|[\s'"`(=])(?:[A-Za-z]:)?(?:[\\/][^\s'"`\\/:]+)+[\\/]([^\s'"`\\/]+)/g, '$1');
  return scrubbed.length > max ? `${scrubbed.slice(0, max - 1)}…` : scrubbed;
}

/** A ComfyUI error body (POST /prompt's 400 or node_errors): its message and each node's, without the details. */
export function comfyMessage(json: unknown): string | undefined {
  const j = json as ComfyErrorBody | undefined;
  const e = j?.error;
  const head = typeof e === 'string' ? e : typeof (e as { message?: unknown })?.message === 'string' ? (e as { message: string }).message : undefined;
  const nodes = Object.entries(j?.node_errors && !Array.isArray(j.node_errors) ? j.node_errors : {}).map(([id, n]) => {
    const each = (n.errors ?? []).map((x) => {
      const input = typeof x.extra_info?.input_name === 'string' ? x.extra_info.input_name : undefined;
      return `${oneLine(x.message ?? 'invalid', 120)}${input ? ` (${input})` : ''}`;
    });
    return `node ${id} (${n.class_type ?? '?'}): ${[...new Set(each)].join('; ')}`;
  });
  const text = [head && oneLine(head, 160), ...nodes].filter(Boolean).join('; ');
  return text ? (text.length > MAX_WORDS ? `${text.slice(0, MAX_WORDS - 1)}…` : text) : undefined;
}

export type HistoryEntry = {
  outputs?: Record<string, Record<string, unknown>>;
  status?: { status_str?: string; completed?: boolean; messages?: Array<[string, Record<string, unknown>]> };
};

/** The execution_error of a finished prompt's history, whole (for the log). */
export const executionError = (entry: HistoryEntry) => (entry.status?.messages ?? []).find(([t]) => t === 'execution_error')?.[1];

/** Why a finished prompt failed, in words a user may read: the node, its type, and the first line of its exception. */
export function historyFailure(entry: HistoryEntry): string | undefined {
  const messages = entry.status?.messages ?? [];
  const error = executionError(entry);
  if (error) return `ComfyUI node ${String(error.node_id ?? '?')} (${String(error.node_type ?? '?')}) failed: ${oneLine(String(error.exception_message ?? '')) || 'no message'}`;
  if (messages.some(([t]) => t === 'execution_interrupted')) return 'ComfyUI interrupted the workflow';
  if (entry.status?.status_str === 'error') return 'ComfyUI ended the workflow with an error';
  return undefined;
}
