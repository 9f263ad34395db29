import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/*
 * A provider's published contract for one call, as stored under test/contracts/<provider>/ (the
 * format is described in test/contracts/README.md). Fakes hold every request they receive to it
 * and every answer they give.
 */
export interface ContractSource {
  /** Where the contract was read: a page, an OpenAPI document, an SDK file. */
  url: string;
  /** The day it was read (YYYY-MM-DD). */
  retrieved: string;
  /** The repository commit it was read at, for a source in a repository. */
  commit?: string;
  /** How `npm run contracts:refresh` reads it again (see test/contracts/refresh.ts). */
  refresh?: Record<string, unknown>;
}

export interface Contract {
  provider: string;
  /** `METHOD /path` as the provider names it. */
  call: string;
  /** One line: what this contract covers. */
  covers: string;
  source: ContractSource;
  /** Other sources the schema was read from, each with its url and what it gave. */
  also?: Array<{ url: string; retrieved: string; gave: string }>;
  request: {
    method: string;
    path: string;
    /** application/json (default), multipart/form-data, or none for a call without a body. */
    contentType?: string;
    headers?: object;
    query?: object;
    body?: object;
  };
  /** JSON Schemas of the documented answers, by status (`200`, `4xx` ...). */
  responses: Record<string, object>;
}

/** One way a request breaks its contract, located as providers locate it. */
export interface ContractProblem {
  where: 'body' | 'query' | 'header';
  /** The path of the field, e.g. ['input', 0, 'url']; empty for the whole body. */
  path: Array<string | number>;
  /** `missing`, `unknown`, `type`, `enum` or `invalid`. */
  kind: 'missing' | 'unknown' | 'type' | 'enum' | 'invalid';
  message: string;
}

const CONTRACTS_DIR = path.resolve(import.meta.dirname, '../contracts');
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
addFormats.default(ajv);
// Citations and notes beside each field: `x-source` (the page or line a field was read from) and `x-note`.
ajv.addVocabulary(['x-source', 'x-note']);

const loaded = new Map<string, Contract>();
const compiled = new WeakMap<object, ValidateFunction>();

/** The contract stored as test/contracts/<provider>/<name>.json. */
export function loadContract(provider: string, name: string): Contract {
  const file = path.join(CONTRACTS_DIR, provider, `${name}.json`);
  let c = loaded.get(file);
  if (!c) {
    c = JSON.parse(fs.readFileSync(file, 'utf8')) as Contract;
    loaded.set(file, c);
  }
  return c;
}

/** Every contract stored for a provider, by file name. */
export function contractsOf(provider: string): Record<string, Contract> {
  const dir = path.join(CONTRACTS_DIR, provider);
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => [f.slice(0, -5), loadContract(provider, f.slice(0, -5))]),
  );
}

/** Every provider that has a folder of contracts. */
export const contractProviders = (): string[] => fs.readdirSync(CONTRACTS_DIR, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);

function validator(schema: object): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

function problem(where: ContractProblem['where'], e: ErrorObject): ContractProblem {
  const at: Array<string | number> = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const name = (p: Array<string | number>) => (p.length ? p.join('.') : where);
  switch (e.keyword) {
    case 'required': {
      const field = [...at, String((e.params as { missingProperty: string }).missingProperty)];
      return { where, path: field, kind: 'missing', message: `${name(field)} is required` };
    }
    case 'additionalProperties': {
      const field = [...at, String((e.params as { additionalProperty: string }).additionalProperty)];
      return { where, path: field, kind: 'unknown', message: `${name(field)} is not a field of this call` };
    }
    case 'type':
      return { where, path: at, kind: 'type', message: `${name(at)} must be ${(e.params as { type: string }).type}` };
    case 'enum':
    case 'const': {
      const allowed = e.keyword === 'enum' ? (e.params as { allowedValues: unknown[] }).allowedValues : [(e.params as { allowedValue: unknown }).allowedValue];
      return { where, path: at, kind: 'enum', message: `${name(at)} must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}` };
    }
    default:
      return { where, path: at, kind: 'invalid', message: `${name(at)} ${e.message ?? 'is invalid'}` };
  }
}

// The errors of a oneOf/anyOf branch that did not match are noise beside the branch that nearly did.
const meaningful = (errors: ErrorObject[]): ErrorObject[] => {
  const leaves = errors.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'anyOf' && e.keyword !== 'if');
  return leaves.length ? leaves : errors;
};

function check(where: ContractProblem['where'], schema: object | undefined, value: unknown): ContractProblem[] {
  if (!schema) return [];
  const v = validator(schema);
  if (v(value)) return [];
  const seen = new Set<string>();
  return meaningful(v.errors ?? [])
    .map((e) => problem(where, e))
    .filter((p) => {
      const k = `${p.kind} ${p.path.join('.')}`;
      return seen.has(k) ? false : (seen.add(k), true);
    });
}

/**
 * What is wrong with a request by its contract: headers (names lower case), query and body
 * (JSON, or a multipart form as `formFields` gives it). Empty when it holds.
 */
export function requestProblems(c: Contract, r: { headers?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown }): ContractProblem[] {
  return [...check('header', c.request.headers, r.headers ?? {}), ...check('query', c.request.query, r.query ?? {}), ...check('body', c.request.body, r.body)];
}

/**
 * A fake's own answer must be one the contract documents: a fake that drifts from the provider's
 * shapes would let the adapter read fields the provider never sends. Throws (the test fails).
 */
export function checkAnswer(c: Contract, status: number, body: unknown): void {
  const schema = c.responses[String(status)] ?? c.responses[`${String(status)[0]}xx`];
  if (!schema) throw new Error(`fake of ${c.provider} answered ${c.call} with ${status}, which its contract does not document`);
  const problems = check('body', schema, body);
  if (problems.length) throw new Error(`fake of ${c.provider} answered ${c.call} ${status} outside its contract: ${problems.map((p) => p.message).join('; ')}`);
}

/**
 * A multipart text part that carries JSON (sync's `options`, Submagic's `dictionary`), held to the
 * `contentSchema` its contract gives it; its problems are located under the part's name.
 */
export function jsonPartProblems(c: Contract, name: string, value: unknown): ContractProblem[] {
  const part = (c.request.body as { properties?: Record<string, { contentSchema?: object }> } | undefined)?.properties?.[name];
  if (typeof value !== 'string' || !part?.contentSchema) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return [{ where: 'body', path: [name], kind: 'invalid', message: `${name} must be JSON` }];
  }
  // A message starts with where it is: the part's own name for the part as a whole, else the path within it.
  return check('body', part.contentSchema, parsed).map((p) => ({ ...p, path: [name, ...p.path], message: p.path.length ? `${name}.${p.message}` : p.message.replace(/^body/, name) }));
}

/** A multipart form as contracts describe it: text parts as strings, file parts as {filename, type, size}. */
export async function formFields(form: FormData): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const lists = new Set<string>();
  for (const [name, value] of form.entries()) {
    const v = typeof value === 'string' ? value : { filename: value.name, type: value.type, size: value.size };
    // A part named `x[]`, or repeated, is a list.
    if (lists.has(name)) (out[name] as unknown[]).push(v);
    else if (name.endsWith('[]') || name in out) {
      out[name] = name in out ? [out[name], v] : [v];
      lists.add(name);
    } else out[name] = v;
  }
  return out;
}
