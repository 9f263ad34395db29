import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { printedSchema } from '../http/graphql/schema.ts';

/** `npm run schema`: writes the SDL printed from the code to schema/schema.graphql. */
const target = fileURLToPath(new URL('../../schema/schema.graphql', import.meta.url));
await fs.writeFile(target, printedSchema());
process.stdout.write(`wrote ${target}\n`);
