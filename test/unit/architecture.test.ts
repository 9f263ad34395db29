import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkArchitecture, describeViolations } from '../support/architecture.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the layering of DESIGN holds in src/ (and tasks/)', () => {
  it('no domain file imports I/O, no service a transport, no repository a service, and only repositories and db build SQL', () => {
    const violations = checkArchitecture(ROOT);
    expect(violations, describeViolations(violations)).toEqual([]);
  });
});

describe('the check fails on each kind of planted violation', () => {
  const planted = fs.mkdtempSync(path.join(os.tmpdir(), 'adforge-arch-'));
  afterAll(() => fs.rmSync(planted, { recursive: true, force: true }));
  const plant = (files: Record<string, string>) => {
    fs.rmSync(planted, { recursive: true, force: true });
    for (const [f, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(planted, f)), { recursive: true });
      fs.writeFileSync(path.join(planted, f), text);
    }
    return checkArchitecture(planted).map((v) => `${v.file}: ${v.rule}`);
  };

  it.each([
    ['a domain file that reads a file', { 'src/domain/pricing.ts': "import fs from 'node:fs';\n" }, 'src/domain/pricing.ts: domain code is pure'],
    ['a domain file that imports a repository', { 'src/domain/x.ts': "import { findTeam } from '../repositories/teams.ts';\n" }, 'src/domain/x.ts: domain code is pure'],
    ['a domain file that imports the database driver', { 'src/domain/x.ts': "import pg from 'pg';\n" }, 'src/domain/x.ts: domain code is pure'],
    ['a service that imports a transport', { 'src/services/x.ts': "import { startHttpServer } from '../http/server.ts';\n" }, 'src/services/x.ts: a service never imports a transport'],
    ['a service that imports the CLI (multi-line import)', { 'src/services/x.ts': "import {\n  print,\n} from '../cli/output.ts';\n" }, 'src/services/x.ts: a service never imports a transport'],
    ['a repository that imports a service', { 'src/repositories/x.ts': "import type { Deps } from '../services/context.ts';\n" }, 'src/repositories/x.ts: a repository never imports a service'],
    ['a service that builds SQL', { 'src/services/x.ts': "export const q = (db: any) => db.selectFrom('teams').selectAll().execute();\n" }, 'src/services/x.ts: only src/repositories and src/db build SQL'],
    ['a transport with the sql tag', { 'src/http/x.ts': "import { sql } from 'kysely';\nexport const q = (db: any) => sql`select 1`.execute(db);\n" }, 'src/http/x.ts: only src/repositories and src/db build SQL'],
    ['raw SQL through pg', { 'src/events/x.ts': "export const q = (c: any) => c.query('select pg_notify($1, $2)', ['a', 'b']);\n" }, 'src/events/x.ts: only src/repositories and src/db build SQL'],
    ['a transport that calls a repository', { 'src/http/x.ts': "import { findTeam } from '../repositories/teams.ts';\n" }, 'src/http/x.ts: a transport only translates'],
    ['a job handler that calls a repository', { 'src/jobs/x.ts': "import { purgeRateLimitHits } from '../repositories/rate-limits.ts';\n" }, 'src/jobs/x.ts: a job handler calls services, never repositories'],
    ['a task (old layout) that calls a repository', { 'tasks/x.ts': "import { purgeRateLimitHits } from '../src/repositories/rate-limits.ts';\n" }, 'tasks/x.ts: a job handler calls services, never repositories'],
    ['an adapter that imports a service', { 'src/adapters/x/y.ts': "import { createTeamService } from '../../services/teams.ts';\n" }, 'src/adapters/x/y.ts: an outbound adapter never imports'],
  ])('%s', (_what, files, expected) => {
    const found = plant(files);
    expect(found.some((f) => f.startsWith(expected)), found.join('\n')).toBe(true);
  });

  it('leaves allowed imports alone: type-only rows in a transport, SQL in a repository, zod in the domain', () => {
    expect(
      plant({
        'src/http/x.ts': "import type { ProductRow } from '../db/types.ts';\nimport { createProductService } from '../services/products.ts';\n",
        'src/repositories/x.ts': "import { sql } from 'kysely';\nexport const q = (db: any) => sql`select 1`.execute(db);\n",
        'src/domain/x.ts': "import { z } from 'zod';\nimport { createHash } from 'node:crypto';\n",
        'src/services/x.ts': "// db.selectFrom('teams') in a comment is not SQL\nimport { findTeam } from '../repositories/teams.ts';\n",
      }),
    ).toEqual([]);
  });
});
