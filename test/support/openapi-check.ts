import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../src/http/rest/openapi.ts';

// Every answer of /api/v1 the e2e suite receives is checked against the OpenAPI document: a status
// the operation does not document, or a body that does not match its schema, fails the test that
// made the request. Requests to paths or methods the document does not have (unknown routes, the
// tests of 404 and 405 behaviour) are the spec's general rules, not an operation's, and pass.

const COMPONENTS = 'https://adforge.invalid/components';
const PREFIX = '/api/v1';

type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };

const doc = openApiDocument() as unknown as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
const relink = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS}#/$defs/`));

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema({ $id: COMPONENTS, $defs: relink(doc.components.schemas) });

const operations = Object.entries(doc.paths).flatMap(([template, ops]) =>
  Object.entries(ops).map(([method, op]) => ({
    method: method.toUpperCase(),
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    op,
  })),
);
const compiled = new Map<unknown, ValidateFunction>();

/** Throws when an answer of /api/v1 breaks the document; answers elsewhere are not its business. */
export function checkAnswer(method: string, url: string, status: number, body: unknown): void {
  const path = url.split('?')[0]!;
  if (!path.startsWith(`${PREFIX}/`) || path === `${PREFIX}/openapi.json`) return;
  const local = path.slice(PREFIX.length);
  // A fixed segment beats a parameter (`/avatars/custom` before `/avatars/{id}`).
  const candidates = operations.filter((o) => o.method === method.toUpperCase() && o.pattern.test(local));
  const found = candidates.find((o) => !o.template.includes('{')) ?? candidates[0];
  if (!found) return;
  const response = found.op.responses[String(status)];
  const where = `${method} ${path} answered ${status}`;
  if (!response) throw new Error(`${where}, which the OpenAPI document does not list for ${found.method} ${found.template}: ${JSON.stringify(body)?.slice(0, 300)}`);
  const schema = response.content?.['application/json']?.schema;
  if (!schema) {
    if (body !== undefined && body !== '') throw new Error(`${where} with a body the document says it has none of`);
    return;
  }
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(relink(schema))));
  if (!validate(body)) {
    throw new Error(`${where} with a body that does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}; body ${JSON.stringify(body)?.slice(0, 500)}`);
  }
}
