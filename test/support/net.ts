export { freePort } from '../../src/net/ports.ts';
