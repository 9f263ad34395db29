export { freePort } from '../../src/db/ports.ts';
