export { freePort } from '../../src/adapters/net/ports.ts';
