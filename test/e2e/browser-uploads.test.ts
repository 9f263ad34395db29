import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { launchBrowser, openTab, screenshot, type Tab } from '../support/browser.ts';
import { pngBytes } from '../support/image-host.ts';

// The dashboard's file drop on the create forms and the library pages, in a real headless
// Chromium: picked files go to POST /auth/uploads and the field gets their `upload:<id>`.

let svc: TestService;
let browser: Browser;
let tab: Tab;
let team: Awaited<ReturnType<TestService['team']>>;
let png: Buffer;

beforeAll(async () => {
  svc = await startTestService({}, { worker: true });
  team = await svc.team({ credits: 2000 });
  png = await pngBytes(200, 120, '#2a9d8f');
  browser = await launchBrowser();
  tab = await openTab(browser, svc.baseUrl);
  const link = await svc.app.services.members.createUser(team.teamId, { email: 'dropper@example.com', role: 'member' });
  await tab.page.goto(link.url);
  await tab.page.getByLabel('New password').fill('dropper password 1');
  await tab.page.getByLabel('The same again').fill('dropper password 1');
  await tab.page.getByLabel('The same again').press('Enter');
  await tab.page.getByRole('heading', { name: 'Generations', exact: true }).waitFor();
}, 120_000);
afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await svc?.close();
});

const nav = (name: string) => tab.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
const count = async (table: 'uploads' | 'generations' | 'products') => Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where team_id = ${team.teamId}`.execute(svc.app.db)).rows[0]!.n);
const UPLOAD_REF = /^upload:[0-9a-f-]{36}$/;

describe('file drop on the create forms', () => {
  it('image edit: a picked PNG is uploaded, shown with its name, size and preview, and the edit completes from it', async () => {
    const { page } = tab;
    await nav('Create');
    await page.getByRole('navigation', { name: 'What to create' }).getByRole('link', { name: 'Image edit' }).click();
    const form = page.getByRole('form', { name: 'Image edit' });
    await form.getByLabel('What to change').fill('Put the swatch on a beach');
    await form.getByLabel('Image files', { exact: true }).setInputFiles({ name: 'swatch.png', mimeType: 'image/png', buffer: png });
    const chosen = form.getByTestId('file-chosen');
    expect(png.length).toBeLessThan(1024);
    await chosen.filter({ hasText: `swatch.png · ${png.length} B` }).waitFor();
    await expect.poll(() => chosen.locator('img').evaluate((i: HTMLImageElement) => (i.complete ? i.naturalWidth : -1)), { timeout: 10_000, interval: 100 }).toBe(200);
    const ref = await form.getByLabel('Image URLs (one per line)').inputValue();
    expect(ref).toMatch(UPLOAD_REF);
    const upload = (await svc.api('GET', `/api/v1/uploads/${ref.slice('upload:'.length)}`, { key: team.key })).body;
    expect(upload).toMatchObject({ content_type: 'image/png', size: png.length, status: 'ready' });
    await expect.poll(async () => form.getByTestId('price').textContent()).toMatch(/^\d+$/);
    await screenshot(page, 'create-image-edit-upload');
    await form.getByRole('button', { name: 'Edit image' }).click();
    const card = page.getByTestId('generation-card').first();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 60_000, interval: 300 }).toBe('completed');
    const id = await card.getAttribute('data-id');
    const row = await svc.app.db.selectFrom('generations').select(['params', 'status']).where('id', '=', id!).executeTakeFirstOrThrow();
    expect(row.status).toBe('completed');
    expect(row.params.reference_image_urls).toEqual([ref]);
  });

  it('a wrong kind (text named .png) shows the server\'s words, fills nothing and creates nothing', async () => {
    const { page } = tab;
    await nav('Create');
    await page.getByRole('navigation', { name: 'What to create' }).getByRole('link', { name: 'Avatar swap' }).click();
    const form = page.getByRole('form', { name: 'Avatar swap' });
    const [uploads, generations] = [await count('uploads'), await count('generations')];
    await form.getByLabel('Face image file', { exact: true }).setInputFiles({ name: 'face.png', mimeType: 'image/png', buffer: Buffer.from('not a picture at all, only words\n') });
    await form.getByRole('alert').filter({ hasText: /^file: the bytes are not/ }).waitFor();
    expect(await form.getByLabel('Face image URL').inputValue()).toBe('');
    expect(await form.getByTestId('file-chosen').count()).toBe(0);
    expect(await form.getByRole('button', { name: 'Swap the face' }).isDisabled()).toBe(true);
    expect([await count('uploads'), await count('generations')]).toEqual([uploads, generations]);
  });
});

describe('file drop on the library pages', () => {
  it('adds a product from a picked image', async () => {
    const { page } = tab;
    await nav('Products');
    const form = page.getByRole('form', { name: 'New product' });
    await form.getByLabel('Name').fill('Teal swatch');
    await form.getByLabel('Category').fill('fabric');
    await form.getByLabel('Description').fill('A square of teal cloth');
    await form.getByLabel('Image file', { exact: true }).setInputFiles({ name: 'teal.png', mimeType: 'image/png', buffer: png });
    await form.getByTestId('file-chosen').filter({ hasText: 'teal.png' }).waitFor();
    expect(await form.getByLabel('Image URL').inputValue()).toMatch(UPLOAD_REF);
    await form.getByRole('button', { name: 'Add product' }).click();
    const card = page.getByTestId('product').filter({ hasText: 'Teal swatch' });
    await expect.poll(() => card.locator('img').evaluate((i: HTMLImageElement) => (i.complete ? i.naturalWidth : -1)), { timeout: 10_000, interval: 100 }).toBe(200);
    // The form is empty again, and so is its file.
    expect(await form.getByLabel('Image URL').inputValue()).toBe('');
    expect(await form.getByTestId('file-chosen').count()).toBe(0);
    await screenshot(page, 'products-upload');
    expect(tab.problems).toEqual([]);
    expect(tab.outside).toEqual([]);
  });

  it('adds an avatar from a portrait dropped on the zone; the picker is reached with the keyboard', async () => {
    const { page } = tab;
    await nav('Avatars');
    const form = page.getByRole('form', { name: 'New avatar' });
    await form.getByLabel('Portrait URL').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type)).toBe('file');
    expect(await form.getByLabel('Portrait file', { exact: true }).evaluate((e) => e === document.activeElement)).toBe(true);
    await form.getByLabel('Name').fill('Teal');
    // A drop as the browser delivers it: a DataTransfer holding the file.
    const zone = form.getByTestId('file-drop');
    const dataTransfer = await page.evaluateHandle((bytes: number[]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(bytes)], 'portrait.png', { type: 'image/png' }));
      return dt;
    }, [...png]);
    await zone.dispatchEvent('dragover', { dataTransfer });
    await zone.dispatchEvent('drop', { dataTransfer });
    await form.getByTestId('file-chosen').filter({ hasText: 'portrait.png' }).waitFor();
    expect(await form.getByLabel('Portrait URL').inputValue()).toMatch(UPLOAD_REF);
    await form.getByRole('button', { name: 'Add avatar' }).click();
    await page.getByTestId('avatar').filter({ hasText: 'yours' }).filter({ hasText: 'Teal' }).waitFor();
  });
});

describe('a forged cross-site upload', () => {
  it('from a form of another site, with the signed-in person\'s cookie: refused, nothing stored', async () => {
    const before = await count('uploads');
    const attacker = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><body>
        <form id="f" method="POST" action="${svc.baseUrl}/auth/uploads" enctype="multipart/form-data" target="out">
          <input type="file" name="file">
        </form>
        <iframe name="out"></iframe>
      </body>`);
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
    const attackerUrl = `http://localhost:${(attacker.address() as { port: number }).port}/`;
    const answers: number[] = [];
    const listen = (res: import('playwright-core').Response) => {
      if (res.url() === `${svc.baseUrl}/auth/uploads`) answers.push(res.status());
    };
    // The attacker's page is another site: let the tab reach it.
    await tab.context.route(`${attackerUrl}**`, (route) => route.continue());
    tab.page.on('response', listen);
    try {
      await tab.page.goto(attackerUrl);
      await tab.page.locator('input[type=file]').setInputFiles({ name: 'x.png', mimeType: 'image/png', buffer: png });
      await tab.page.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit());
      await expect.poll(() => answers.length, { timeout: 10_000, interval: 100 }).toBe(1);
      expect(answers).toEqual([403]);
      expect(await count('uploads')).toBe(before);
    } finally {
      tab.page.off('response', listen);
      await tab.context.unroute(`${attackerUrl}**`);
      attacker.close();
      tab.outside.length = 0;
    }

    // Plain HTTP: the cookie alone, or a token from the wrong origin, uploads nothing either.
    const agent = new Agent({ connect: { ca: await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
    try {
      const cookie = (await tab.context.cookies(svc.baseUrl)).map((c) => `${c.name}=${c.value}`).join('; ');
      const res = await request(`${svc.baseUrl}/auth/uploads`, { method: 'POST', dispatcher: agent, headers: { cookie, origin: 'https://evil.example', 'content-type': 'image/png' }, body: png });
      expect(res.statusCode).toBe(403);
      expect(((await res.body.json()) as any).error.code).toBe('forbidden');
    } finally {
      await agent.close();
    }
    expect(await count('uploads')).toBe(before);
  });
});
