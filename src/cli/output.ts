import { isAppError } from '../domain/errors.ts';

export interface OutputOptions {
  json?: boolean;
}

/** --json: exactly one JSON object on stdout; otherwise aligned key: value lines. */
export function print(value: Record<string, unknown>, opts: OutputOptions): void {
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
    return;
  }
  const width = Math.max(...Object.keys(value).map((k) => k.length));
  for (const [k, v] of Object.entries(value)) {
    process.stdout.write(`${k.padEnd(width)}  ${v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}\n`);
  }
}

export function printError(e: unknown, opts: OutputOptions): void {
  const body = isAppError(e)
    ? e.toBody()
    : { error: { code: 'internal_error', message: e instanceof Error ? e.message : String(e) } };
  if (opts.json) process.stdout.write(`${JSON.stringify(body)}\n`);
  else process.stderr.write(`adforge: ${body.error.message}\n`);
}
