import fs from 'node:fs';
import path from 'node:path';

/**
 * DESIGN's layering as rules over the import lines of the source tree. Paths are relative to
 * the folder checked (the repository root): `src/...`. A violation names the file, the line and
 * the rule, so a failing test says what to move where.
 */
export interface Violation {
  file: string;
  line: number;
  rule: string;
  text: string;
}

interface Import {
  line: number;
  text: string;
  /** The module as written: a package name or a path resolved against the repository root. */
  target: string;
  typeOnly: boolean;
  /** `import('...')`, evaluated when it runs rather than when the file loads. */
  dynamic: boolean;
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[\s\S]*?\s+from\s+)?['"]([^'"]+)['"]/;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

// Statements that build SQL: kysely's query builders, its sql tag, and raw text sent through pg.
const SQL = [
  /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(/,
  /\bsql\s*(<[^>]*>)?\s*`/,
  /\bsql\.(raw|ref|id|lit|join|table|val)\s*\(/,
  /\.query\s*(<[^>]*>)?\s*\(\s*['"`]\s*(select|insert|update|delete|with|create|alter|drop|listen|unlisten|notify|set|begin|commit|rollback|savepoint|release|lock|truncate)\b/i,
];

// Modules a pure domain file may use: computation only, no clock-free guarantees needed beyond "no I/O".
const PURE_PACKAGES = new Set(['zod', 'node:crypto', 'node:zlib', 'node:util']);

function layerOf(file: string): string {
  const rel = file.replace(/\\/g, '/');
  if (rel.startsWith('src/domain/')) return 'domain';
  if (rel.startsWith('src/services/')) return 'services';
  if (rel.startsWith('src/jobs/')) return 'jobs';
  if (rel.startsWith('src/repositories/')) return 'repositories';
  if (rel.startsWith('src/db/')) return 'db';
  if (rel.startsWith('src/events/')) return 'events';
  if (rel.startsWith('src/adapters/')) return 'adapters';
  if (rel.startsWith('src/observability/')) return 'observability';
  if (rel.startsWith('src/http/') || rel.startsWith('src/cli/') || rel === 'src/worker.ts') return 'transport';
  if (rel.startsWith('tasks/')) return 'tasks';
  return 'root'; // src/app.ts (the composition root), src/config.ts, src/log.ts
}

function importsOf(root: string, file: string, source: string): Import[] {
  const out: Import[] = [];
  const lines = source.split('\n');
  // Import statements may span lines: join each statement up to its module string.
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*import\b(?!\s*\()/.test(lines[i]!) && !/^\s*export\s+(type\s+)?(\{|\*)/.test(lines[i]!)) continue;
    let stmt = lines[i]!;
    let j = i;
    const complete = (t: string) => /\bfrom\s+['"][^'"]+['"]/.test(t) || /^\s*import\s+['"]/.test(t) || /^\s*export\s+(type\s+)?\{[^}]*\}\s*;?\s*$/.test(t);
    while (!complete(stmt) && j + 1 < lines.length && j - i < 60) stmt += `\n${lines[++j]}`;
    const m = IMPORT.exec(stmt);
    if (!m) continue;
    const spec = m[3]!;
    // `import { type A, type B }` is type-only too.
    const named = /\{([^}]*)\}/.exec(stmt)?.[1];
    const allTypes = named !== undefined && !/^\s*import\s+\w+\s*,/.test(stmt) && named.split(',').filter((s) => s.trim()).every((s) => /^\s*type\s/.test(s));
    out.push({ line: i + 1, text: lines[i]!.trim(), target: resolve(root, file, spec), typeOnly: Boolean(m[2]) || allTypes, dynamic: false });
  }
  for (const [n, text] of lines.entries()) {
    for (const m of text.matchAll(DYNAMIC_IMPORT)) out.push({ line: n + 1, text: text.trim(), target: resolve(root, file, m[1]!), typeOnly: false, dynamic: true });
  }
  return out;
}

function resolve(root: string, file: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  return path.relative(root, path.resolve(root, path.dirname(file), spec)).replace(/\\/g, '/');
}

const isTransport = (t: string) => t.startsWith('src/http/') || t.startsWith('src/cli/') || t === 'src/worker.ts';
const isLocal = (t: string) => t.startsWith('src/') || t.startsWith('tasks/');
/** What a worker task (tasks/) may import of the project: it calls services, never repositories, the database or a transport. */
const TASK_IMPORTS = ['src/services/', 'src/jobs/', 'src/domain/', 'src/observability/', 'tasks/'];

/** The rules of DESIGN's drawing; each returns the broken rule's text, or undefined. */
function ruleFor(layer: string, file: string, imp: Import): string | undefined {
  const t = imp.target;
  switch (layer) {
    case 'domain':
      if (isLocal(t) ? !t.startsWith('src/domain/') : !PURE_PACKAGES.has(t) && !imp.typeOnly) return 'domain code is pure: it imports only domain files, zod and computation modules (no I/O)';
      return undefined;
    case 'services':
      if (isTransport(t)) return 'a service never imports a transport (http, cli, worker)';
      if (t === 'src/app.ts') return 'a service never imports the composition root';
      if (t.startsWith('tasks/')) return 'a service never imports a task: it queues a job through its contract in src/jobs';
      return undefined;
    case 'repositories':
      if (t.startsWith('src/services/') || t.startsWith('src/jobs/') || t.startsWith('tasks/')) return 'a repository never imports a service, a job contract or a task';
      if (isTransport(t) || t.startsWith('src/adapters/') || t === 'src/app.ts') return 'a repository imports only db, domain, event channels and other repositories';
      return undefined;
    case 'db':
      if (isLocal(t) && !t.startsWith('src/db/') && !t.startsWith('src/domain/') && t !== 'src/config.ts') {
        return 'the database module imports only db, domain and config';
      }
      return undefined;
    case 'adapters':
      if (t.startsWith('src/services/') || t.startsWith('src/repositories/') || t.startsWith('src/jobs/') || t.startsWith('tasks/') || isTransport(t) || t === 'src/app.ts') {
        return 'an outbound adapter never imports services, repositories, jobs, tasks or transports';
      }
      return undefined;
    case 'jobs':
      // Contracts only: what a producer imports to queue a job must not pull in what runs it.
      if (t.startsWith('src/services/') || t.startsWith('tasks/') || isTransport(t) || t === 'src/app.ts') return 'a job contract imports no service, task or transport';
      if (t.startsWith('src/repositories/') && file !== 'src/jobs/define.ts') return 'a job contract never calls a repository (only queueJob in src/jobs/define.ts queues)';
      return undefined;
    case 'tasks':
      if (isLocal(t) && !TASK_IMPORTS.some((d) => t.startsWith(d))) return 'a task imports only services, job contracts, domain, observability and other tasks';
      return undefined;
    case 'observability':
      // Metrics and tracing are used by every layer, so they point at none: the caller hands them what they read.
      if (isLocal(t) && !t.startsWith('src/observability/') && !t.startsWith('src/domain/')) return 'observability imports only its own files and the domain: the caller hands it what it reads';
      return undefined;
    case 'events':
      if (t.startsWith('src/services/') || t.startsWith('src/repositories/') || isTransport(t)) return 'the event bus imports only its channels, db and domain';
      return undefined;
    case 'transport':
      if ((t.startsWith('src/repositories/') || t.startsWith('src/db/')) && !imp.typeOnly) return 'a transport only translates: it reaches data through services, never repositories or the database';
      return undefined;
  }
  return undefined;
}

/** Every .ts file below `dirs` (relative to root), as repository-relative paths. */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(root, d), { withFileTypes: true })) {
      const rel = `${d}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts')) out.push(rel);
    }
  };
  for (const d of dirs) if (fs.existsSync(path.join(root, d))) walk(d);
  return out.sort();
}

/**
 * The import cycles of a graph (file -> the files it imports), each as a path that starts and ends
 * at the same file, one per strongly connected component (Tarjan's algorithm), so a tangle of many
 * files is reported once. A file that imports itself is a cycle too.
 */
export function findImportCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const edges = (n: string) => (graph.get(n) ?? []).filter((m) => graph.has(m));
  const visit = (n: string) => {
    index.set(n, index.size);
    low.set(n, index.get(n)!);
    stack.push(n);
    onStack.add(n);
    for (const m of edges(n)) {
      if (!index.has(m)) {
        visit(m);
        low.set(n, Math.min(low.get(n)!, low.get(m)!));
      } else if (onStack.has(m)) low.set(n, Math.min(low.get(n)!, index.get(m)!));
    }
    if (low.get(n) === index.get(n)) {
      const component: string[] = [];
      let m: string;
      do {
        m = stack.pop()!;
        onStack.delete(m);
        component.push(m);
      } while (m !== n);
      if (component.length > 1 || edges(n).includes(n)) components.push(component.sort());
    }
  };
  for (const n of [...graph.keys()].sort()) if (!index.has(n)) visit(n);
  // One concrete loop per component, the shortest back to its first file (breadth first inside it).
  return components.map((component) => {
    const inside = new Set(component);
    const start = component[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length) {
      const n = queue.shift()!;
      for (const m of edges(n).filter((x) => inside.has(x))) {
        if (m === start) {
          const between: string[] = [];
          for (let k = n; k !== start; k = previous.get(k)!) between.unshift(k);
          return [start, ...between, start];
        }
        if (!previous.has(m) && m !== start) {
          previous.set(m, n);
          queue.push(m);
        }
      }
    }
    return [start, start];
  });
}

export function checkArchitecture(root: string, dirs: readonly string[] = ['src', 'tasks']): Violation[] {
  const violations: Violation[] = [];
  const files = sourceFiles(root, dirs);
  const graph = new Map<string, string[]>();
  const lineOf = new Map<string, Import>();
  for (const file of files) {
    const source = fs.readFileSync(path.join(root, file), 'utf8');
    const layer = layerOf(file);
    const imports = importsOf(root, file, source);
    for (const imp of imports) {
      const rule = ruleFor(layer, file, imp);
      if (rule) violations.push({ file, line: imp.line, rule, text: imp.text });
    }
    // Static imports, type-only ones included: a cycle of types still ties the files' layers
    // together (src/jobs and src/services were one such knot). Dynamic import() is left out: it is
    // how a module loads another lazily, on purpose, and it is not part of either's shape.
    const statics = imports.filter((i) => !i.dynamic && isLocal(i.target));
    graph.set(file, statics.map((i) => i.target));
    for (const i of statics) if (!lineOf.has(`${file} ${i.target}`)) lineOf.set(`${file} ${i.target}`, i);
    if (layer !== 'repositories' && layer !== 'db') {
      for (const [n, text] of source.split('\n').entries()) {
        if (/^\s*(\/\/|\*|\/\*)/.test(text)) continue;
        if (SQL.some((re) => re.test(text))) violations.push({ file, line: n + 1, rule: 'only src/repositories and src/db build SQL', text: text.trim() });
      }
    }
  }
  for (const loop of findImportCycles(graph)) {
    const first = lineOf.get(`${loop[0]} ${loop[1]}`);
    violations.push({ file: loop[0]!, line: first?.line ?? 0, rule: `no import cycles: ${loop.join(' -> ')}`, text: first?.text ?? '' });
  }
  return violations;
}

export const describeViolations = (vs: readonly Violation[]): string => vs.map((v) => `${v.file}:${v.line}  ${v.rule}\n    ${v.text}`).join('\n');
