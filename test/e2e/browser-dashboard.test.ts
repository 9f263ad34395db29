import http from 'node:http';
import { formatBytes } from '../../src/domain/storage-quota.ts';
import { Webhook } from 'standardwebhooks';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { choosePasswordThroughLink, launchBrowser, openTab, screenshot, type Tab } from '../support/browser.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

// The dashboard in a real headless Chromium, against the real server over TLS with a worker.

let svc: TestService;
let browser: Browser;
let team: Awaited<ReturnType<TestService['team']>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const OWNER = { email: 'owner@example.com', password: 'owner password 1' };

beforeAll(async () => {
  svc = await startTestService({ LOCAL_ENGINE_DELAY_MS: '1500' }, { worker: true });
  team = await svc.team({ credits: 500 });
  receiver = await startWebhookReceiver();
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await svc?.close();
});

/** The owner's one-time link opened in a fresh browser: choose a password, land on the gallery. */
async function signInThroughLink(tab: Tab, email: string, role: 'owner' | 'member', password: string): Promise<void> {
  const link = await svc.app.services.members.createUser(team.teamId, { email, role });
  await choosePasswordThroughLink(tab, link.url, password);
}

async function signIn(tab: Tab, email: string, password: string): Promise<void> {
  await tab.page.goto(`${svc.baseUrl}/sign-in`);
  await tab.page.getByLabel('Email').fill(email);
  await tab.page.getByLabel('Password').fill(password);
  await tab.page.getByRole('button', { name: 'Sign in' }).click();
  await tab.page.getByRole('heading', { name: 'Generations', exact: true }).waitFor();
}

describe('the dashboard in a browser', () => {
  let tab: Tab;
  beforeAll(async () => {
    tab = await openTab(browser, svc.baseUrl);
  });
  afterAll(() => tab?.close());

  it('signs in through the one-time link, shows an empty gallery that says what to do, and loads nothing from elsewhere', async () => {
    await tab.page.goto(`${svc.baseUrl}/`);
    await tab.page.getByRole('heading', { name: 'Sign in to adforge' }).waitFor();
    await screenshot(tab.page, 'sign-in');
    await signInThroughLink(tab, OWNER.email, 'owner', OWNER.password);
    await tab.page.getByText('No generations yet').waitFor();
    await screenshot(tab.page, 'generations-empty');
    expect(tab.outside).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it('wrong password: an error in words, never JSON', async () => {
    const other = await openTab(browser, svc.baseUrl);
    try {
      await other.page.goto(`${svc.baseUrl}/sign-in`);
      await other.page.getByLabel('Email').fill(OWNER.email);
      await other.page.getByLabel('Password').fill('not the password');
      await other.page.getByRole('button', { name: 'Sign in' }).click();
      const alert = other.page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toBe('Wrong email or password');
    } finally {
      await other.close();
    }
  });

  it('creates an API key shown once, which works against /api/v1, then revokes it (with confirmation) and it answers 401', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Browser key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('API key').textContent())!;
    expect(key).toMatch(/^service_sk_/);
    const secret = (await page.getByTestId('Webhook secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await screenshot(page, 'api-keys-created');

    expect((await svc.api('GET', '/api/v1/products', { key })).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByTestId('api-key').filter({ hasText: 'Browser key' });
    // The key's use is recorded in the background: the page is read again until it shows it.
    await expect
      .poll(async () => {
        await page.reload();
        return (await row.textContent()) ?? '';
      }, { timeout: 15_000, interval: 250 })
      .not.toContain('Last usednever');

    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText(/^revoked/).waitFor();
    expect((await svc.api('GET', '/api/v1/products', { key })).status).toBe(401);
  });

  it('sets a webhook URL and sends a test event the receiver can verify with the secret shown once', async () => {
    const { page } = tab;
    await page.getByLabel('Name', { exact: true }).fill('Hooks');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('Webhook secret').textContent())!;
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByTestId('api-key').filter({ hasText: 'Hooks' });
    await row.getByRole('button', { name: 'Set webhook URL' }).click();
    await row.getByLabel('Webhook URL for Hooks').fill(receiver.url);
    await row.getByRole('button', { name: 'Save' }).click();
    await row.getByText(receiver.url).waitFor();
    await row.getByRole('button', { name: 'Send test event' }).click();
    await row.getByText('Test event delivered (HTTP 200)').waitFor();
    const got = receiver.received.at(-1)!;
    expect(new Webhook(secret.slice('whsec_'.length)).verify(got.raw.toString(), got.headers as Record<string, string>)).toMatchObject({ event: 'webhook.test' });
    await row.getByRole('button', { name: 'Delivery log' }).click();
    await row.getByRole('cell', { name: 'webhook.test' }).waitFor();
    await screenshot(page, 'api-keys');
  });

  it('creates an image with its price shown first; a double click charges once; the card turns completed without a reload', async () => {
    const { page } = tab;
    const before = (await svc.app.services.credits.balance({ teamId: team.teamId, keyId: null })).credits_used;
    await page.getByRole('link', { name: 'Create' }).click();
    await page.getByLabel('Prompt').fill('A bottle of cold brew on a marble counter');
    await page.getByTestId('price').waitFor();
    const price = Number(await page.getByTestId('price').textContent());
    expect(price).toBeGreaterThan(0);
    await screenshot(page, 'create-text-to-image');
    await page.getByRole('button', { name: 'Create image' }).dblclick();
    await page.getByRole('heading', { name: 'Generations', exact: true }).waitFor();
    const card = page.getByTestId('generation-card').first();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 5_000 }).toBe('processing');
    // The worker finishes it; the subscription turns the card, nobody reloads.
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000, interval: 200 }).toBe('completed');
    await card.locator('img').waitFor();
    expect(await page.getByTestId('generation-card').count()).toBe(1);
    const after = (await svc.app.services.credits.balance({ teamId: team.teamId, keyId: null })).credits_used;
    expect(after - before).toBe(price);
    await screenshot(page, 'generations');
    await card.getByRole('link', { name: 'Details' }).click();
    await page.getByRole('link', { name: 'Download output 1' }).waitFor();
    await screenshot(page, 'generation-detail');
  });

  it("shows a processing card's progress bar moving, with its stage in words, on the gallery and the detail page", async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Generations', exact: true }).first().click();
    await page.getByRole('heading', { name: 'Generations', exact: true }).waitFor();
    // Made by a key: the card arrives through the subscription, then follows the local engine's 1.5 s hold.
    const made = await svc.api('POST', '/api/v1/images/text-to-image', { key: team.key, body: { model: 'fast', prompt: 'a progress bar on a gallery card', aspect_ratio: '1:1' } });
    expect(made.status).toBe(202);
    const card = page.locator(`[data-testid="generation-card"][data-id="${made.body.generation_id}"]`);
    const bar = card.getByTestId('generation-progress');
    await bar.waitFor();
    const seen: number[] = [];
    const stages = new Set<string>();
    await expect
      .poll(
        async () => {
          const value = await bar.getAttribute('data-progress').catch(() => null);
          if (value) seen.push(Number(value));
          const words = await card.getByTestId('generation-stage').textContent().catch(() => null);
          if (words) stages.add(words);
          return new Set(seen).size;
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBeGreaterThanOrEqual(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]!);
    expect([...stages].some((s) => s.startsWith('held before the render (LOCAL_ENGINE_DELAY_MS)'))).toBe(true);
    await screenshot(page, 'generation-progress');
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 30_000, interval: 200 }).toBe('completed');
    expect(await bar.count()).toBe(0);

    // The detail page shows the bar too while processing.
    const next = await svc.api('POST', '/api/v1/images/text-to-image', { key: team.key, body: { model: 'fast', prompt: 'a progress bar on a detail page', aspect_ratio: '1:1' } });
    await page.goto(`${svc.baseUrl}/generations/${next.body.generation_id}`);
    const detailBar = page.getByTestId('generation-progress');
    await detailBar.waitFor();
    await expect.poll(async () => Number((await detailBar.getAttribute('data-progress').catch(() => '0')) || 0), { timeout: 10_000, interval: 100 }).toBeGreaterThan(0.1);
    await page.getByRole('link', { name: 'Download output 1' }).waitFor({ timeout: 30_000 });
    expect(await detailBar.count()).toBe(0);
  });

  it('shows the balance, the spend chart and the ledger', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Credits' }).click();
    await page.getByTestId('credits-remaining').waitFor();
    await page.getByRole('img', { name: 'Credits spent per day by type' }).waitFor();
    await page.getByRole('cell', { name: /debit/ }).first().waitFor();
    // The team's storage: the image made above is counted, as the server counts it.
    const storage = await svc.app.services.storageUsage.get(team.teamId);
    expect(storage.outputs_bytes).toBeGreaterThan(0);
    expect(await page.getByTestId('storage-used').textContent()).toBe(`${formatBytes(storage.total_bytes)} stored`);
    await screenshot(page, 'credits');
  });

  it('lays out for a phone and follows a dark system theme', async () => {
    const phone = await openTab(browser, svc.baseUrl, { width: 390, height: 844, colorScheme: 'dark' });
    try {
      await signIn(phone, OWNER.email, OWNER.password);
      const menu = phone.page.getByRole('button', { name: 'Menu' });
      expect(await menu.isVisible()).toBe(true);
      expect(await phone.page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);
      const bg = await phone.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(bg).toBe('rgb(17, 17, 22)');
      // The screenshot shows the card's thumbnail, not the moment before it has loaded.
      await phone.page.getByTestId('generation-card').first().locator('img').waitFor();
      await phone.page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('[data-testid="generation-card"] img')].every((i) => i.complete && i.naturalWidth > 0));
      await screenshot(phone.page, 'phone-dark-generations');
      await menu.click();
      await phone.page.getByRole('link', { name: 'Credits' }).click();
      await phone.page.getByTestId('credits-remaining').waitFor();
      expect(phone.problems).toEqual([]);
    } finally {
      await phone.close();
    }
  });

  it('GraphiQL loads from our server alone, with no network, and runs a query as the signed-in person', async () => {
    const { page, outside } = tab;
    const before = outside.length;
    await page.goto(`${svc.baseUrl}/graphql`);
    await page.locator('.graphiql-container').waitFor({ timeout: 20_000 });
    await expect.poll(async () => page.locator('.graphiql-query-editor').textContent(), { timeout: 15_000 }).toContain('viewer');
    await page.getByRole('button', { name: /Execute query/ }).click();
    await expect.poll(async () => page.locator('.graphiql-response').textContent(), { timeout: 15_000 }).toContain(OWNER.email);
    await screenshot(page, 'graphiql');
    expect(tab.problems.filter((p) => /Content Security Policy/.test(p))).toEqual([]);
    await screenshot(page, 'graphiql');
    expect(outside.slice(before)).toEqual([]);
  });
});

describe('roles and forgeries', () => {
  it('a member does not see Settings > API Keys, and the page itself says it is for owners', async () => {
    const tab = await openTab(browser, svc.baseUrl);
    try {
      await signInThroughLink(tab, 'member@example.com', 'member', 'member password 1');
      expect(await tab.page.getByRole('link', { name: 'API keys' }).count()).toBe(0);
      await tab.page.goto(`${svc.baseUrl}/settings/api-keys`);
      await tab.page.getByRole('heading', { name: 'Owners only' }).waitFor();
      await tab.page.getByRole('link', { name: 'Members' }).click();
      await tab.page.getByRole('cell', { name: OWNER.email }).waitFor();
      expect(await tab.page.getByRole('button', { name: 'Invite' }).count()).toBe(0);
      await screenshot(tab.page, 'members-as-member');
    } finally {
      await tab.close();
    }
  });

  it('a forged cross-site POST from another site is refused: no key made, no session ended', async () => {
    const tab = await openTab(browser, svc.baseUrl);
    // The attacker's page, on another site (http://localhost, not https://127.0.0.1).
    const attacker = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><body>
        <form id="f" method="POST" action="${svc.baseUrl}/graphql" enctype="text/plain" target="out">
          <input name='{"query":"mutation { createApiKey(name: \\"forged\\") { __typename } }","x":"' value='"}'>
        </form>
        <form id="g" method="POST" action="${svc.baseUrl}/auth/sign-out-everywhere" enctype="text/plain" target="out"><input name="a" value="b"></form>
        <iframe name="out"></iframe>
        <script>document.getElementById('g').submit(); setTimeout(() => document.getElementById('f').submit(), 300);</script>
      </body>`);
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
    const attackerUrl = `http://localhost:${(attacker.address() as { port: number }).port}/`;
    try {
      await signInThroughLink(tab, 'second-owner@example.com', 'owner', 'second owner password');
      const keysBefore = (await svc.app.services.teamKeys.list({ teamId: team.teamId, userId: '', role: 'owner', tier: 'starter' })).length;
      // The dashboard left behind first, so every answer heard next is to the attacker's page.
      await tab.page.goto('about:blank');
      // The attacker's host is reachable for this test only.
      await tab.context.unroute('**/*');
      const answers: string[] = [];
      tab.page.on('response', (r) => {
        if (r.url().startsWith(svc.baseUrl)) answers.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
      });
      await tab.page.goto(attackerUrl);
      await expect.poll(() => answers.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      // Both refused before anything ran: a form's text/plain body is never read as a request of ours.
      expect(answers.sort()).toEqual([expect.stringMatching(/^POST \/auth\/sign-out-everywhere 4\d\d$/), expect.stringMatching(/^POST \/graphql 4\d\d$/)]);
      const keysAfter = await svc.app.services.teamKeys.list({ teamId: team.teamId, userId: '', role: 'owner', tier: 'starter' });
      expect(keysAfter.length).toBe(keysBefore);
      expect(keysAfter.some((k) => k.name === 'forged')).toBe(false);
      // The session survived the forged sign-out.
      await tab.page.goto(`${svc.baseUrl}/credits`);
      await tab.page.getByTestId('credits-remaining').waitFor();
    } finally {
      await tab.close();
      await new Promise<void>((r) => attacker.close(() => r()));
    }
  });
});
