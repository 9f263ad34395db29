import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { isForeignKeyViolation, requireUuid } from '../../src/services/ids.ts';

function refusal(value: unknown, field?: string): AppError {
  try {
    requireUuid(value, field);
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error(`expected ${JSON.stringify(value)} to be refused`);
}

const LOWER = '2f1c9a54-6f1e-4a39-9b59-1f0d6c1e8a11';

describe('requireUuid', () => {
  it('accepts a lower-case UUID unchanged', () => {
    expect(requireUuid(LOWER)).toBe(LOWER);
  });

  it('accepts upper- and mixed-case UUIDs and returns them in lower case', () => {
    expect(requireUuid(LOWER.toUpperCase())).toBe(LOWER);
    expect(requireUuid('2F1c9A54-6f1E-4a39-9B59-1f0D6c1E8a11')).toBe(LOWER);
  });

  it('accepts the nil UUID, the max UUID and every version nibble', () => {
    expect(requireUuid('00000000-0000-0000-0000-000000000000')).toBe('00000000-0000-0000-0000-000000000000');
    expect(requireUuid('FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF')).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff');
    for (const v of '123456789abcdef') {
      const id = `2f1c9a54-6f1e-${v}a39-9b59-1f0d6c1e8a11`;
      expect(requireUuid(id)).toBe(id);
    }
  });

  it.each([
    '',
    'abc',
    '123',
    '2f1c9a546f1e4a399b591f0d6c1e8a11',
    `{${LOWER}}`,
    `urn:uuid:${LOWER}`,
    ` ${LOWER}`,
    `${LOWER} `,
    `${LOWER}\n`,
    `${LOWER}0`,
    LOWER.slice(0, -1),
    LOWER.replace('a', 'g'),
    LOWER.replace(/-/g, '_'),
    '2f1c9a54-6f1e4a39-9b59-1f0d6c1e8a11-',
    '../etc/passwd',
    "' or 1=1 --",
  ])('refuses %j with validation_error naming the field', (value) => {
    const e = refusal(value);
    expect(e.code).toBe('validation_error');
    expect(e.status).toBe(400);
    expect(e.message).toBe('id: must be a UUID');
  });

  it.each([undefined, null, 42, true, {}, [LOWER], { id: LOWER }])('refuses the non-string %j', (value) => {
    const e = refusal(value);
    expect(e.code).toBe('validation_error');
    expect(e.status).toBe(400);
  });

  it('names the given field in the message', () => {
    expect(refusal('nope', 'product_id').message).toBe('product_id: must be a UUID');
    expect(refusal('nope', 'avatar_id').message).toBe('avatar_id: must be a UUID');
  });
});

describe('isForeignKeyViolation', () => {
  it('recognises the PostgreSQL foreign_key_violation code 23503', () => {
    expect(isForeignKeyViolation({ code: '23503' })).toBe(true);
    expect(isForeignKeyViolation(Object.assign(new Error('fk'), { code: '23503' }))).toBe(true);
  });

  it('rejects other codes and non-objects', () => {
    for (const e of [{ code: '23505' }, { code: 23503 }, {}, null, undefined, '23503', 23503, new Error('23503')]) {
      expect(isForeignKeyViolation(e)).toBe(false);
    }
  });
});
