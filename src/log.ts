import pino, { type Logger } from 'pino';

// Secrets must never reach a log line, whatever object a caller passes.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  'authorization',
  'Authorization',
  'key',
  '*.key',
  '*[*].key',
  'webhook_secret',
  '*.webhook_secret',
  'password',
  '*.password',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
