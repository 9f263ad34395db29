import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/domain/database-unavailable.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable: the database away, not a statement wrong', () => {
  const away: [string, unknown][] = [
    ['refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['reset', withCode('ECONNRESET')],
    ['admin shutdown (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['connection failure (08006)', withCode('08006')],
    ['too many connections (53300)', withCode('53300')],
    ['terminated', new Error('Connection terminated unexpectedly')],
    ['pool timeout', new Error('timeout exceeded when trying to connect')],
    ['wrapped', new Error('query failed', { cause: withCode('ECONNREFUSED') })],
    ['aggregate', Object.assign(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed'), {})],
  ];
  for (const [name, e] of away) it(`${name}: yes`, () => expect(isDatabaseUnavailable(e)).toBe(true));

  const wrong: [string, unknown][] = [
    ['a check violation (23514)', withCode('23514', 'violates check constraint')],
    ['a syntax error (42601)', withCode('42601')],
    ['a unique violation (23505)', withCode('23505')],
    ['a plain error', new Error('boom')],
    ['not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ];
  for (const [name, e] of wrong) it(`${name}: no`, () => expect(isDatabaseUnavailable(e)).toBe(false));
});
