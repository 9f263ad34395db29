import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { mount, routeUsing } from '../../src/http/rest/v1/route.ts';
import { buildServices, type Services } from '../../src/service-factories.ts';

const config = loadConfig({ DATA_DIR: '/tmp/adforge-composition-root' });
// Made services only close over the database; none of these tests sends a query.
const db = {} as NonNullable<Parameters<typeof buildServices>[0]['db']>;

describe('the composition root', () => {
  it('builds the services a caller names, with what they are made from, and nothing else', async () => {
    const built = await buildServices({ db, config }, ['teams', 'credits']);
    expect(Object.keys(built).sort()).toEqual(['credits', 'teams']);
    expect(typeof built.teams.createTeam).toBe('function');
  });

  it("refuses a service made from a part the caller did not give, naming both (the admin CLI gives no storage or engines)", async () => {
    await expect(buildServices({ db, config }, ['products'])).rejects.toThrow('products is made from deps, which this caller did not give');
    await expect(buildServices({ db, config }, ['quotes'])).rejects.toThrow(/is made from (deps|engines), which this caller did not give/);
  });

  it('gives a REST handler only the services its module names', async () => {
    const services = { credits: { name: 'credits' }, brands: { name: 'brands' }, uploads: { name: 'uploads' } } as unknown as Services;
    const route = routeUsing('credits', 'brands');
    let given: object | undefined;
    const fastify = Fastify();
    mount(fastify, services, [
      route({ method: 'GET', path: '/seen', operationId: 'seen', tag: 't', summary: 's', responses: {}, errors: [], handler: (s) => ((given = s), { ok: true }) }),
    ]);
    const res = await fastify.inject({ method: 'GET', url: '/seen' });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(given ?? {}).sort()).toEqual(['brands', 'credits']);
    await fastify.close();
  });
});

describe('GraphQL type modules', () => {
  it('read services only through the accessor each makes with servicesFor, never the whole record or the app', async () => {
    const fs = await import('node:fs/promises');
    const dir = new URL('../../src/http/graphql/types/', import.meta.url);
    const reaching: string[] = [];
    for (const name of await fs.readdir(dir)) {
      const text = await fs.readFile(new URL(name, dir), 'utf8');
      if (/ctx\.(services|app)\b|sealServices|service-factories\.ts|\/app\.ts'/.test(text)) reaching.push(name);
    }
    expect(reaching).toEqual([]);
  });
});
