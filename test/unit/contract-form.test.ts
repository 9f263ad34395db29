import { describe, expect, it } from 'vitest';
import { formFields } from '../support/contract.ts';

describe('a multipart form as contracts describe it', () => {
  it('text parts as strings, files as {filename, type, size}; `x[]` and repeated parts as lists', async () => {
    const f = new FormData();
    f.append('prompt', 'hi');
    f.append('image[]', new Blob([new Uint8Array(3)], { type: 'image/png' }), 'a.png');
    for (const t of ['a', 'b', 'c']) f.append('tag', t);
    expect(await formFields(f)).toEqual({ prompt: 'hi', 'image[]': [{ filename: 'a.png', type: 'image/png', size: 3 }], tag: ['a', 'b', 'c'] });
  });
});
