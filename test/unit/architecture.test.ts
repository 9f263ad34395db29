import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkArchitecture, describeViolations, findImportCycles } from '../support/architecture.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the layering of DESIGN holds in src/ and tasks/', () => {
  it('no domain file imports I/O, no service a transport or a task, no repository a service, only repositories and db build SQL, and no import cycle', () => {
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
    ['a repository that imports a service', { 'src/repositories/x.ts': "import type { Deps } from '../services/deps.ts';\n" }, 'src/repositories/x.ts: a repository never imports a service'],
    ['a service that builds SQL', { 'src/services/x.ts': "export const q = (db: any) => db.selectFrom('teams').selectAll().execute();\n" }, 'src/services/x.ts: only src/repositories and src/db build SQL'],
    ['a transport with the sql tag', { 'src/http/x.ts': "import { sql } from 'kysely';\nexport const q = (db: any) => sql`select 1`.execute(db);\n" }, 'src/http/x.ts: only src/repositories and src/db build SQL'],
    ['raw SQL through pg', { 'src/events/x.ts': "export const q = (c: any) => c.query('select pg_notify($1, $2)', ['a', 'b']);\n" }, 'src/events/x.ts: only src/repositories and src/db build SQL'],
    ['a transport that calls a repository', { 'src/http/x.ts': "import { findTeam } from '../repositories/teams.ts';\n" }, 'src/http/x.ts: a transport only translates'],
    ['a job contract that calls a repository', { 'src/jobs/x.ts': "import { purgeRateLimitHits } from '../repositories/rate-limits.ts';\n" }, 'src/jobs/x.ts: a job contract never calls a repository'],
    ['a job contract that imports a service (what runs a job, for its producers)', { 'src/jobs/x.ts': "import type { GenerationRunner } from '../services/generations/generation-runner.ts';\n" }, 'src/jobs/x.ts: a job contract imports no service, task or transport'],
    ['a service that imports a task', { 'src/services/x.ts': "import { runGenerationTask } from '../../tasks/run-generation.ts';\n" }, 'src/services/x.ts: a service never imports a task'],
    ['a task that calls a repository', { 'tasks/x.ts': "import { purgeRateLimitHits } from '../src/repositories/rate-limits.ts';\n" }, 'tasks/x.ts: a task imports only services, job contracts, domain, observability and other tasks'],
    ['a task that imports a transport', { 'tasks/x.ts': "import { startHttpServer } from '../src/http/server.ts';\n" }, 'tasks/x.ts: a task imports only services'],
    ['a task that reaches the database', { 'tasks/x.ts': "import type { Db } from '../src/db/pool.ts';\n" }, 'tasks/x.ts: a task imports only services'],
    ['metrics that read a repository', { 'src/observability/x.ts': "import type { JobCounts } from '../repositories/jobs.ts';\n" }, 'src/observability/x.ts: observability imports only its own files and the domain'],
    ['tracing that imports a service', { 'src/observability/x.ts': "import { createTeamService } from '../services/teams.ts';\n" }, 'src/observability/x.ts: observability imports only its own files and the domain'],
    ['observability that imports a transport', { 'src/observability/x.ts': "import { startHttpServer } from '../http/server.ts';\n" }, 'src/observability/x.ts: observability imports only its own files and the domain'],
    ['the database module that imports an adapter', { 'src/db/x.ts': "import { freeRead } from '../adapters/net/free-read.ts';\n" }, 'src/db/x.ts: the database module imports only db, domain and config'],
    ['an adapter that imports a service', { 'src/adapters/x/y.ts': "import { createTeamService } from '../../services/teams.ts';\n" }, 'src/adapters/x/y.ts: an outbound adapter never imports'],
  ])('%s', (_what, files, expected) => {
    const found = plant(files);
    expect(found.some((f) => f.startsWith(expected)), found.join('\n')).toBe(true);
  });

  it('leaves allowed imports alone: type-only rows in a transport, SQL in a repository, zod in the domain, a task on its contract and a service', () => {
    expect(
      plant({
        'tasks/x.ts': "import { xJob } from '../src/jobs/x.ts';\nimport type { GenerationRunner } from '../src/services/generations/generation-runner.ts';\nimport { AppError } from '../src/domain/errors.ts';\n",
        'src/jobs/x.ts': "import { z } from 'zod';\nimport { defineJob } from './define.ts';\n",
        'src/jobs/define.ts': "import { addJob } from '../repositories/jobs.ts';\n",
        'src/http/x.ts': "import type { ProductRow } from '../db/types.ts';\nimport { createProductService } from '../services/products.ts';\n",
        'src/repositories/x.ts': "import { sql } from 'kysely';\nexport const q = (db: any) => sql`select 1`.execute(db);\n",
        'src/domain/x.ts': "import { z } from 'zod';\nimport { createHash } from 'node:crypto';\n",
        'src/observability/x.ts': "import { Counter } from 'prom-client';\nimport { AppError } from '../domain/errors.ts';\nimport { startTracing } from './tracing.ts';\n",
        'src/services/x.ts': "// db.selectFrom('teams') in a comment is not SQL\nimport { findTeam } from '../repositories/teams.ts';\n",
      }),
    ).toEqual([]);
  });

  it('finds an import cycle across src/ and tasks/, type-only imports included, and names its files in order', () => {
    const found = plant({
      'src/services/x.ts': "import { xJob } from '../jobs/x.ts';\n",
      'src/jobs/x.ts': "import type { XContext } from '../../tasks/x.ts';\n",
      'tasks/x.ts': "import type { XService } from '../src/services/x.ts';\n",
    });
    expect(found).toContain('src/jobs/x.ts: no import cycles: src/jobs/x.ts -> tasks/x.ts -> src/services/x.ts -> src/jobs/x.ts');
    // The same three files without the edge back: no cycle.
    expect(
      plant({
        'src/services/x.ts': "import { xJob } from '../jobs/x.ts';\n",
        'src/jobs/x.ts': "import { z } from 'zod';\n",
        'tasks/x.ts': "import type { XService } from '../src/services/x.ts';\n",
      }).filter((f) => f.includes('cycle')),
    ).toEqual([]);
    // A lazy import() is how a module loads another on purpose at run time: not a cycle of the files' shapes.
    expect(plant({ 'src/a.ts': "import { b } from './b.ts';\n", 'src/b.ts': "export const a = () => import('./a.ts');\n" })).toEqual([]);
  });
});

describe('the cycle search', () => {
  it('reports each tangle once, with one loop through it, and a file that imports itself', () => {
    const graph = new Map<string, string[]>([
      ['a', ['b']],
      ['b', ['c', 'outside']],
      ['c', ['a', 'b']],
      ['d', ['d']],
      ['e', ['a']],
    ]);
    expect(findImportCycles(graph)).toEqual([
      ['a', 'b', 'c', 'a'],
      ['d', 'd'],
    ]);
    expect(findImportCycles(new Map([['a', ['b']], ['b', []], ['e', ['a', 'b']]]))).toEqual([]);
  });
});
