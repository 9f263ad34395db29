import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { passwdEntry } from '../../src/db/postgres-user.ts';

describe("the postgres user's ids read from /etc/passwd", () => {
  it('finds the named user only, and says nothing for a missing user, a bad line or a missing file', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-passwd-'));
    const file = path.join(dir, 'passwd');
    await fs.writeFile(
      file,
      ['root:x:0:0:root:/root:/bin/bash', 'postgresql:x:7:7::/:/bin/false', 'broken:x:abc:12::/:', 'postgres:x:105:110:PostgreSQL:/var/lib/postgresql:/bin/bash', ''].join('\n'),
    );
    try {
      expect(await passwdEntry('postgres', file)).toEqual({ uid: 105, gid: 110 });
      expect(await passwdEntry('root', file)).toEqual({ uid: 0, gid: 0 });
      expect(await passwdEntry('broken', file)).toBeUndefined();
      expect(await passwdEntry('nobody-here', file)).toBeUndefined();
      expect(await passwdEntry('postgres', path.join(dir, 'missing'))).toBeUndefined();
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
