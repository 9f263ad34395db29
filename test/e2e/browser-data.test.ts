import fs from 'node:fs/promises';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { extract } from 'tar-stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';
import { choosePasswordThroughLink, launchBrowser, openTab, screenshot, type Tab } from '../support/browser.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';

// The team's data in the dashboard, in a real headless Chromium against the real server with a
// worker: deleting generations (one, a selection), retention, the export, the audit log, and
// deleting the team (last: it signs everyone out).

const TEAM_NAME = 'Northwind Studio';
const OWNER = { email: 'data-owner@example.com', password: 'data owner password' };
const MEMBER = { email: 'data-member@example.com', password: 'data member password' };
let svc: TestService;
let browser: Browser;
let team: Awaited<ReturnType<TestService['team']>>;
let images: Awaited<ReturnType<typeof startImageHost>>;
let owner: Tab;
let member: Tab;

async function signInThroughLink(tab: Tab, email: string, role: 'owner' | 'member', password: string): Promise<void> {
  const link = await svc.app.services.members.createUser(team.teamId, { email, role });
  await choosePasswordThroughLink(tab, link.url, password);
}

/** A text-to-image made with the team's key and waited for: it has ended when this answers. */
async function madeImage(prompt: string): Promise<string> {
  const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: team.key, body: { model: 'fast', prompt, aspect_ratio: '1:1', quantity: 1 } });
  expect(res.status).toBe(202);
  const id = res.body.generation_id as string;
  expect((await waitForGeneration(svc, team.key, id)).status).toBe('completed');
  return id;
}

const nav = (tab: Tab, name: string) => tab.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
const gone = async (id: string) => (await svc.api('GET', `/api/v1/generations/${id}`, { key: team.key })).status === 404;

async function untarNames(archive: Buffer): Promise<string[]> {
  const names: string[] = [];
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      names.push(header.name);
      stream.on('end', () => next());
      stream.resume();
    });
    ex.on('finish', () => resolve());
    ex.on('error', reject);
  });
  Readable.from([archive]).pipe(createGunzip()).pipe(ex as unknown as NodeJS.WritableStream);
  await done;
  return names;
}

beforeAll(async () => {
  svc = await startTestService({ LOCAL_ENGINE_DELAY_MS: '100' }, { worker: true });
  team = await svc.team({ credits: 1000, name: TEAM_NAME });
  images = await startImageHost({ '/mug.png': sendBytes(await pngBytes(256, 256, '#cc6633'), 'image/png') });
  browser = await launchBrowser();
  owner = await openTab(browser, svc.baseUrl);
  member = await openTab(browser, svc.baseUrl);
  await signInThroughLink(owner, OWNER.email, 'owner', OWNER.password);
  await signInThroughLink(member, MEMBER.email, 'member', MEMBER.password);
}, 120_000);
afterAll(async () => {
  await owner?.close();
  await member?.close();
  await browser?.close();
  await images?.close();
  await svc?.close();
});

describe('deleting generations', () => {
  it('a card\'s delete asks first, then the generation is gone and the product it used can be deleted', async () => {
    const product = await svc.api('POST', '/api/v1/products', { key: team.key, body: { name: 'Thermo mug', description: 'Keeps coffee hot', category: 'kitchen', image_url: images.url('/mug.png') } });
    expect(product.status).toBe(201);
    const styles = await svc.api('GET', '/api/v1/styles', { key: team.key });
    const shots = await svc.api('POST', '/api/v1/images/product-shots', { key: team.key, body: { product_id: product.body.id, style_id: styles.body.data[0].id, model: 'fast', aspect_ratio: '1:1' } });
    expect(shots.status).toBe(202);
    const id = shots.body.generation_id as string;
    expect((await waitForGeneration(svc, team.key, id)).status).toBe('completed');
    // In use: the spec's 409.
    expect((await svc.api('DELETE', `/api/v1/products/${product.body.id}`, { key: team.key })).status).toBe(409);

    const { page } = owner;
    await page.goto(`${svc.baseUrl}/`);
    const card = page.locator(`[data-testid="generation-card"][data-id="${id}"]`);
    await card.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: 'Delete this generation?' }).waitFor();
    await screenshot(page, 'generation-delete-confirm');
    // Cancelled: nothing happens.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await gone(id)).toBe(false);
    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete generation' }).click();
    await page.getByRole('status').filter({ hasText: 'Generation deleted.' }).waitFor();
    await card.waitFor({ state: 'detached' });
    expect(await gone(id)).toBe(true);
    expect((await svc.api('DELETE', `/api/v1/products/${product.body.id}`, { key: team.key })).status).toBe(204);
  });

  it('the detail page deletes too, after its confirmation, and goes back to the gallery', async () => {
    const id = await madeImage('a lamp on a desk');
    const { page } = owner;
    await page.goto(`${svc.baseUrl}/generations/${id}`);
    await page.getByRole('link', { name: 'Download output 1' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete generation' }).click();
    await page.getByRole('heading', { name: 'Generations', exact: true }).waitFor();
    expect(await gone(id)).toBe(true);
  });

  it('deletes a selection of cards after a confirmation that says how many; the others stay', async () => {
    const ids = [await madeImage('a red shoe'), await madeImage('a blue shoe'), await madeImage('a green shoe')];
    const { page } = owner;
    await page.goto(`${svc.baseUrl}/`);
    const cardOf = (id: string) => page.locator(`[data-testid="generation-card"][data-id="${id}"]`);
    await cardOf(ids[0]!).getByRole('checkbox', { name: 'Select' }).check();
    await cardOf(ids[2]!).getByRole('checkbox', { name: 'Select' }).check();
    const bar = page.getByRole('group', { name: 'Selection' });
    await bar.getByText('2 generations selected').waitFor();
    await bar.getByRole('button', { name: 'Delete selected' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: 'Delete 2 generations?' }).waitFor();
    await screenshot(page, 'generations-bulk-delete-confirm');
    await dialog.getByRole('button', { name: 'Delete 2 generations' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted 2 generations.' }).waitFor();
    expect([await gone(ids[0]!), await gone(ids[1]!), await gone(ids[2]!)]).toEqual([true, false, true]);
    await cardOf(ids[1]!).waitFor();
    expect(await cardOf(ids[0]!).count()).toBe(0);
  });

  it('a processing generation cannot be deleted: its delete and checkbox are disabled and say why, and the bulk count names it', async () => {
    const id = await madeImage('a kettle still being made');
    // Back to processing, as if its engine were still at work (the worker is done with it).
    await sql`update generations set status = 'processing', completed_at = null where id = ${id}`.execute(svc.app.db);
    const { page } = owner;
    await page.goto(`${svc.baseUrl}/`);
    const card = page.locator(`[data-testid="generation-card"][data-id="${id}"]`);
    const del = card.getByRole('button', { name: 'Delete' });
    expect(await del.isDisabled()).toBe(true);
    expect(await del.getAttribute('aria-describedby')).toBeTruthy();
    expect(await card.getByText(/Still processing: it can be deleted once it has ended/).count()).toBe(1);
    expect(await card.getByRole('checkbox', { name: 'Select' }).isDisabled()).toBe(true);
    await page.getByText('Delete in bulk').click();
    await page.getByRole('button', { name: 'Delete all matching…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('1 generation still processing is not deleted').waitFor();
    await screenshot(page, 'generations-bulk-delete-processing');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    // The API agrees: 409.
    expect((await svc.api('DELETE', `/api/v1/generations/${id}`, { key: team.key })).status).toBe(409);
    await sql`update generations set status = 'completed', completed_at = now() where id = ${id}`.execute(svc.app.db);
  });

  it('deletes what was created before a day, saying how many first; the newer ones stay', async () => {
    const old = await madeImage('an old flyer');
    const recent = await madeImage('a new flyer');
    await sql`update generations set created_at = now() - make_interval(days => 10) where id = ${old}`.execute(svc.app.db);
    const { page } = owner;
    await page.goto(`${svc.baseUrl}/`);
    await page.getByText('Delete in bulk').click();
    const day = new Date(Date.now() - 5 * 86_400_000);
    const local = `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
    await page.getByLabel('Created before').fill(local);
    await page.getByRole('button', { name: 'Delete all matching…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: 'Delete 1 generation?' }).waitFor();
    await dialog.getByRole('button', { name: 'Delete 1 generation' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted 1 generation.' }).waitFor();
    expect([await gone(old), await gone(recent)]).toEqual([true, false]);
  });

  it('deletes everything the filter matches, saying how many first', async () => {
    const { page } = owner;
    const before = await svc.api('GET', '/api/v1/generations?limit=100', { key: team.key });
    const count = before.body.data.filter((g: { status: string }) => g.status === 'completed').length;
    expect(count).toBeGreaterThan(0);
    await page.goto(`${svc.baseUrl}/?status=completed`);
    await page.getByText('Delete in bulk').click();
    await page.getByRole('button', { name: 'Delete all matching…' }).click();
    const dialog = page.getByRole('dialog');
    const n = `${count} generation${count === 1 ? '' : 's'}`;
    await dialog.getByRole('heading', { name: `Delete ${n}?` }).waitFor();
    await dialog.getByRole('button', { name: `Delete ${n}` }).click();
    await page.getByRole('status').filter({ hasText: `Deleted ${n}.` }).waitFor();
    await page.getByText('Nothing matches these filters').waitFor();
  });
});

describe('retention', () => {
  it('an owner sets a shorter retention for the team; a member reads it and cannot change it', async () => {
    const { page } = owner;
    await nav(owner, 'Team data');
    await page.getByRole('heading', { name: 'Retention' }).waitFor();
    await page.getByTestId('retention').filter({ hasText: 'kept until you delete them' }).waitFor();
    await page.getByLabel('Keep generated files for (days)').fill('14');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await page.getByRole('status').filter({ hasText: 'Retention saved.' }).waitFor();
    await page.getByTestId('retention').filter({ hasText: 'kept 14 days, then removed' }).waitFor();
    expect((await svc.app.services.retention.get(team.teamId)).team_days).toBe(14);
    await screenshot(page, 'team-data-owner');

    await nav(member, 'Team data');
    await member.page.getByTestId('retention').filter({ hasText: 'kept 14 days, then removed' }).waitFor();
    await member.page.getByText('Only your team\'s owners can change it.').waitFor();
    expect(await member.page.getByLabel('Keep generated files for (days)').count()).toBe(0);
    expect(await member.page.getByRole('button', { name: 'Export everything' }).count()).toBe(0);
    expect(await member.page.getByRole('button', { name: /Delete this team/ }).count()).toBe(0);
    await screenshot(member.page, 'team-data-member');
  });

  it('a generation whose files the retention period removed says so, with no broken picture', async () => {
    const id = await madeImage('an old poster');
    await sql`update generations set created_at = now() - make_interval(days => 30) where id = ${id}`.execute(svc.app.db);
    await svc.app.services.retention.run();
    const { page } = owner;
    await page.goto(`${svc.baseUrl}/`);
    const card = page.locator(`[data-testid="generation-card"][data-id="${id}"]`);
    await card.getByTestId('files-expired').filter({ hasText: "by the team's retention period" }).waitFor();
    expect(await card.locator('img').count()).toBe(0);
    await card.getByRole('link', { name: 'Details' }).click();
    await page.getByTestId('files-expired').waitFor();
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.getByRole('link', { name: /Download output/ }).count()).toBe(0);
    expect(owner.problems).toEqual([]);
  });
});

describe('audit log', () => {
  it('lists a key revocation done here, filtered by action and by actor; members do not see it', async () => {
    const { page } = owner;
    await nav(owner, 'API keys');
    await page.getByLabel('Name', { exact: true }).fill('Audited key');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByTestId('api-key').filter({ hasText: 'Audited key' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText(/^revoked/).waitFor();

    await nav(owner, 'Audit log');
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.getByRole('group', { name: 'Filters' }).getByLabel('Action').selectOption('api_key.revoked');
    const lines = page.getByTestId('audit-line');
    // The filtered page has replaced the unfiltered one once every line shown is a revocation.
    await expect.poll(() => page.locator('[data-testid="audit-line"]:not([data-action="api_key.revoked"])').count(), { timeout: 10_000 }).toBe(0);
    await lines.first().waitFor();
    expect(await lines.count()).toBe(1);
    const line = lines.first();
    expect(await line.getAttribute('data-action')).toBe('api_key.revoked');
    expect(await line.textContent()).toContain(OWNER.email);
    expect(await line.textContent()).toContain('Audited key');
    await screenshot(page, 'audit-log');
    // By actor: the member made no revocation.
    await page.getByLabel('Actor').selectOption({ label: MEMBER.email });
    await page.getByText('Nothing matches these filters').waitFor();
    await page.getByLabel('Actor').selectOption({ label: OWNER.email });
    await lines.first().waitFor();
    // By time: nothing written before an hour ago.
    const past = new Date(Date.now() - 3600_000);
    const local = new Date(past.getTime() - past.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('Until').fill(local);
    await page.getByText('Nothing matches these filters').waitFor();

    expect(await member.page.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await member.page.goto(`${svc.baseUrl}/settings/audit-log`);
    await member.page.getByRole('heading', { name: 'Owners only' }).waitFor();
  });
});

describe('export and team deletion', () => {
  it('exports everything: started, made by the worker, downloaded once as a gzip tar that lists the generations', async () => {
    const kept = await madeImage('a kept bottle');
    const { page } = owner;
    await nav(owner, 'Team data');
    await page.getByRole('button', { name: 'Export everything' }).click();
    const status = page.getByTestId('team-export');
    await expect.poll(() => status.getAttribute('data-status'), { timeout: 60_000, interval: 250 }).toBe('completed');
    await screenshot(page, 'team-export-ready');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download archive' }).click()]);
    const archive = await fs.readFile((await download.path())!);
    expect([...archive.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    const names = await untarNames(archive);
    expect(names.some((n) => n.includes('generations') && n.includes(kept))).toBe(true);
    // The link is handed out once: the page says so and offers no second download.
    await status.getByText(/its link was handed out/).waitFor();
    expect(await page.getByRole('button', { name: 'Download archive' }).count()).toBe(0);
  });

  it('deletes the team behind its typed name: a wrong name is refused, the right one signs everyone out', async () => {
    const { page } = owner;
    await page.getByRole('button', { name: 'Delete this team…' }).click();
    const form = page.getByRole('form', { name: 'Delete this team' });
    await form.getByLabel(/Type the team's name/).fill('Northwind');
    await form.getByRole('button', { name: 'Delete the team for good' }).click();
    await page.getByRole('alert').waitFor();
    expect((await svc.api('GET', '/api/v1/products', { key: team.key })).status).toBe(200);
    await screenshot(page, 'team-delete-refused');
    await form.getByLabel(/Type the team's name/).fill(TEAM_NAME);
    await form.getByRole('button', { name: 'Delete the team for good' }).click();
    await page.getByRole('heading', { name: 'Sign in to adforge' }).waitFor({ timeout: 20_000 });
    expect((await svc.api('GET', '/api/v1/products', { key: team.key })).status).toBe(401);
    // The member's session ended too: their next page is the sign-in page.
    await member.page.goto(`${svc.baseUrl}/credits`);
    await member.page.getByRole('heading', { name: 'Sign in to adforge' }).waitFor();
  });
});
