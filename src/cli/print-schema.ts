import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { printedSchema } from '../http/graphql/schema.ts';
import { printedOpenApi } from '../http/rest/openapi.ts';
import { clientTypes } from './client-types.ts';

/**
 * `npm run schema`: writes what is printed from the code: the SDL and the OpenAPI document to
 * schema/, and the typed client's types (generated from that document) to clients/typescript/.
 */
const files: [string, string][] = [
  ['schema/schema.graphql', printedSchema()],
  ['schema/openapi.json', printedOpenApi()],
  ['clients/typescript/schema.d.ts', await clientTypes()],
];
for (const [file, text] of files) {
  const target = fileURLToPath(new URL(`../../${file}`, import.meta.url));
  await fs.writeFile(target, text);
  process.stdout.write(`wrote ${target}\n`);
}
