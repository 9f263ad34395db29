import fs from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { launchBrowser, openTab, screenshot, type Tab } from '../support/browser.ts';
import { pngBytes, sendBytes, startImageHost } from '../support/image-host.ts';
import { FIXTURE_PAGE_ID, startMetaAdLibraryFake, type MetaAdLibraryFake } from '../support/meta-ad-library-fake.ts';

// The dashboard's library, create forms, ad library and campaigns in a real headless Chromium.

const TOKEN = 'source-token';
let svc: TestService;
let browser: Browser;
let tab: Tab;
let team: Awaited<ReturnType<TestService['team']>>;
let images: Awaited<ReturnType<typeof startImageHost>>;
let meta: MetaAdLibraryFake;

beforeAll(async () => {
  meta = await startMetaAdLibraryFake({ token: TOKEN });
  svc = await startTestService({ AD_LIBRARY_SOURCE_URL: meta.baseUrl, AD_LIBRARY_SOURCE_TOKEN: TOKEN, AD_LIBRARY_SOURCE_BACKOFF_MS: '10' }, { worker: true });
  team = await svc.team({ credits: 2000 });
  const png = await pngBytes(256, 256, '#cc6633');
  images = await startImageHost({ '/mug.png': sendBytes(png, 'image/png'), '/face.png': sendBytes(await pngBytes(256, 256, '#e0b090'), 'image/png') });
  browser = await launchBrowser();
  tab = await openTab(browser, svc.baseUrl);
  const link = await svc.app.services.members.createUser(team.teamId, { email: 'maker@example.com', role: 'owner' });
  await tab.page.goto(link.url);
  await tab.page.getByLabel('New password').fill('maker password 1');
  await tab.page.getByLabel('The same again').fill('maker password 1');
  await tab.page.getByLabel('The same again').press('Enter');
  await tab.page.getByRole('heading', { name: 'Generations', exact: true }).waitFor();
}, 120_000);
afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await images?.close();
  await svc?.close();
  await meta?.close();
});

const nav = (name: string) => tab.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

describe('library', () => {
  it('adds a product from an image URL, and a product in use cannot be deleted: the 409 in words', async () => {
    const { page } = tab;
    await nav('Products');
    await page.getByText('No products yet').waitFor();
    const form = page.getByRole('form', { name: 'New product' });
    await form.getByLabel('Name').fill('Thermo mug');
    await form.getByLabel('Category').fill('kitchen');
    await form.getByLabel('Image URL').fill(images.url('/mug.png'));
    await form.getByLabel('Description').fill('Keeps coffee hot for 8 hours');
    // The API's own rule, before anything is sent.
    await form.getByLabel('Price (optional)').fill('-3');
    await form.getByRole('button', { name: 'Add product' }).click();
    expect(await form.getByRole('alert').textContent()).toBe('price: must not be negative');
    await form.getByLabel('Price (optional)').fill('19.9');
    await form.getByRole('button', { name: 'Add product' }).click();
    const card = page.getByTestId('product').filter({ hasText: 'Thermo mug' });
    await card.locator('img').waitFor();
    // The element is there before its picture has loaded: wait for the load, then read its size.
    await expect.poll(() => card.locator('img').evaluate((i: HTMLImageElement) => (i.complete ? i.naturalWidth : -1)), { timeout: 10_000, interval: 100 }).toBe(256);
    await screenshot(page, 'products');

    const product = (await svc.api('GET', '/api/v1/products', { key: team.key })).body.data[0];
    const shots = await svc.api('POST', '/api/v1/images/product-shots', { key: team.key, body: { product_id: product.id, style_id: (await svc.api('GET', '/api/v1/styles', { key: team.key })).body.data[0].id, model: 'fast', aspect_ratio: '1:1' } });
    expect(shots.status).toBe(202);
    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('alert').filter({ hasText: 'Product has associated generations; delete those first' }).waitFor();
  });

  it('adds a brand and deletes it; adds a custom avatar beside the catalogue', async () => {
    const { page } = tab;
    await nav('Brands');
    const form = page.getByRole('form', { name: 'New brand' });
    await form.getByLabel('Name').fill('Northwind');
    await form.getByLabel('Primary colour (optional)').fill('blue');
    await form.getByRole('button', { name: 'Add brand' }).click();
    expect(await form.getByRole('alert').textContent()).toBe('brand_color_primary: must be a hex colour like #1A2B3C');
    await form.getByLabel('Primary colour (optional)').fill('#1A2B3C');
    await form.getByRole('button', { name: 'Add brand' }).click();
    const card = page.getByTestId('brand').filter({ hasText: 'Northwind' });
    await card.waitFor();
    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No brands yet').waitFor();

    await nav('Avatars');
    const avatarForm = page.getByRole('form', { name: 'New avatar' });
    await avatarForm.getByLabel('Name').fill('Sam');
    await avatarForm.getByLabel('Portrait URL').fill(images.url('/face.png'));
    await avatarForm.getByRole('button', { name: 'Add avatar' }).click();
    await page.getByTestId('avatar').filter({ hasText: 'yours' }).filter({ hasText: 'Sam' }).waitFor();
    expect(await page.getByTestId('avatar').count()).toBeGreaterThan(10);
    await screenshot(page, 'avatars');
  });
});

describe('create forms', () => {
  it('talking avatar: picks an avatar, plays a voice preview, shows the price and creates the video', async () => {
    const { page } = tab;
    await nav('Create');
    await page.getByRole('navigation', { name: 'What to create' }).getByRole('link', { name: 'Talking avatar' }).click();
    const form = page.getByRole('form', { name: 'Talking avatar' });
    await form.getByRole('radiogroup', { name: 'Avatar' }).getByRole('radio').first().check();
    const firstVoice = form.getByRole('list', { name: 'Voices' }).getByRole('listitem').first();
    await firstVoice.getByRole('radio').check();
    const preview = firstVoice.locator('audio');
    const played = await preview.evaluate(async (a: HTMLAudioElement) => {
      a.muted = true;
      await a.play();
      await new Promise((r) => setTimeout(r, 400));
      return { time: a.currentTime, duration: a.duration };
    });
    expect(played.time).toBeGreaterThan(0);
    expect(played.duration).toBeGreaterThan(0.3);
    await form.getByLabel('Script').fill('Tired of cold coffee? Meet the mug that keeps it hot.');
    await expect.poll(async () => form.getByTestId('price').textContent()).toBe('20');
    await screenshot(page, 'create-talking-avatar');
    await form.getByRole('button', { name: 'Create video' }).click();
    const card = page.getByTestId('generation-card').first();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 60_000, interval: 300 }).toBe('completed');
    await card.locator('video').waitFor();
  });

  it('ai video: the model table decides the ratios, durations and options offered, and the price follows', async () => {
    const { page } = tab;
    await nav('Create');
    await page.getByRole('navigation', { name: 'What to create' }).getByRole('link', { name: 'AI video' }).click();
    const form = page.getByRole('form', { name: 'AI video' });
    await form.getByLabel('Prompt').fill('A sneaker on wet asphalt at dusk');
    await form.getByLabel('Model').selectOption('sora-2');
    expect(await form.getByLabel('Aspect ratio').locator('option').allTextContents()).toEqual(['16:9', '9:16']);
    expect(await form.getByLabel('Seconds').locator('option').allTextContents()).toEqual(['4', '8', '12', '16', '20']);
    expect(await form.getByLabel('HD').count()).toBe(1);
    await form.getByLabel('Seconds').selectOption('8');
    await expect.poll(async () => form.getByTestId('price').textContent()).toBe('32');
    await form.getByLabel('Model').selectOption('kling-o3');
    expect(await form.getByLabel('Quality').locator('option').allTextContents()).toEqual(['standard', 'pro', '4k']);
    expect(await form.getByLabel('HD').count()).toBe(0);
    expect(await form.getByLabel('Seconds').locator('option').count()).toBe(13);
    await form.getByLabel('Model').selectOption('seedance-2.0-frames');
    // A first frame is required for this model: the API's words, and no price until it is there.
    await form.getByText('first_frame_image_url: is required for seedance-2.0-frames').waitFor();
    expect(await form.getByRole('button', { name: 'Create video' }).isDisabled()).toBe(true);
    await screenshot(page, 'create-ai-video');
  });

  it('voiceover: made at once and played inline', async () => {
    const { page } = tab;
    await nav('Create');
    await page.getByRole('navigation', { name: 'What to create' }).getByRole('link', { name: 'Voiceover' }).click();
    const form = page.getByRole('form', { name: 'Voiceover' });
    await form.getByLabel('Text').fill('Big sale, today only.');
    await expect.poll(async () => form.getByTestId('price').textContent()).toBe('1');
    await form.getByRole('button', { name: 'Make voiceover' }).click();
    const audio = form.getByRole('status').locator('audio');
    await audio.waitFor();
    await expect.poll(() => audio.evaluate((a: HTMLAudioElement) => (a.readyState >= 1 ? a.duration : 0))).toBeGreaterThan(0.5);
  });
});

describe('ad library and campaigns', () => {
  it('scrapes a page with its price shown, follows the job and browses the brand’s ads with their media', async () => {
    const { page } = tab;
    await nav('Ad library');
    await page.getByText('No brands scraped yet').waitFor();
    const form = page.getByRole('form', { name: 'Scrape a page' });
    await form.getByLabel('Ad-library page URL').fill(`https://www.facebook.com/ads/library/?active_status=all&ad_type=all&country=ALL&view_all_page_id=${FIXTURE_PAGE_ID}`);
    await form.getByRole('button', { name: 'Scrape (10 credits)' }).click();
    await form.getByRole('link', { name: 'See the ads' }).click({ timeout: 30_000 });
    const ads = page.getByTestId('ad');
    await ads.first().waitFor();
    expect(await ads.count()).toBeGreaterThan(1);
    await page.locator('[data-testid="ad"] img, [data-testid="ad"] video').first().waitFor();
    await screenshot(page, 'ad-library-brand');
    expect(tab.outside).toEqual([]);
  });

  it('uploads a CSV, shows every row checked and priced, starts it, follows it to the end and downloads the results', async () => {
    const { page } = tab;
    await nav('Campaigns');
    const avatar = (await svc.api('GET', '/api/v1/avatars', { key: team.key })).body.data[0].id;
    const voice = (await svc.api('GET', '/api/v1/voices', { key: team.key })).body.data[0].id;
    const bad = `type,row_key,prompt,model,aspect_ratio\ntext-to-image,a,a red mug,fast,1:1\ntext-to-image,b,a blue mug,nope,1:1\n`;
    await page.getByLabel('CSV file').setInputFiles({ name: 'mugs.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
    await page.getByRole('cell', { name: /^model: / }).waitFor();
    expect(await page.getByRole('button', { name: 'Start campaign' }).isDisabled()).toBe(true);

    const good = [
      'Type,Row_Key,Prompt,Model,Aspect_Ratio,Avatar_ID,Avatar_Type,Script,Voice_ID,Text',
      `text-to-image,hero,"a red mug, steaming",fast,1:1,,,,,`,
      `talking-avatar,intro,,,,${avatar},platform,Hi there,${voice},`,
      `text-to-speech,vo,,,,,,,${voice},"Big sale, today only."`,
    ].join('\r\n');
    await page.getByLabel('Campaign name').fill('Mugs spring');
    await page.getByLabel('CSV file').setInputFiles({ name: 'mugs.csv', mimeType: 'text/csv', buffer: Buffer.from(good) });
    await page.getByText('3 rows · all fine').waitFor();
    expect(await page.getByTestId('campaign-price').textContent()).toBe('22');
    await screenshot(page, 'campaign-checked');
    await page.getByRole('button', { name: 'Start campaign' }).click();
    const progress = page.getByTestId('campaign-progress');
    await expect.poll(() => progress.getAttribute('data-finished'), { timeout: 60_000, interval: 300 }).toBe('true');
    await progress.getByText('3 completed · 0 failed').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download results (CSV)' }).click()]);
    const csv = await fs.readFile((await download.path())!, 'utf8');
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe('row_number,row_key,type,status,credits,generation_id,result_url,error');
    expect(lines).toHaveLength(4);
    expect(lines.slice(1).every((l) => l.includes(',completed,'))).toBe(true);
    await screenshot(page, 'campaign-finished');
  });
});

describe('keyboard', () => {
  it('signs in with the keyboard alone', async () => {
    const kb = await openTab(browser, svc.baseUrl);
    try {
      await kb.page.goto(`${svc.baseUrl}/sign-in`);
      await kb.page.getByRole('heading', { name: 'Sign in to adforge' }).waitFor();
      // The email field has focus; Tab moves on to the password, Enter submits.
      await kb.page.keyboard.type('maker@example.com');
      await kb.page.keyboard.press('Tab');
      await kb.page.keyboard.type('maker password 1');
      await kb.page.keyboard.press('Enter');
      await kb.page.getByRole('heading', { name: 'Generations', exact: true }).waitFor();
      // Tab reaches the menu's links.
      for (let i = 0; i < 12; i++) {
        await kb.page.keyboard.press('Tab');
        if ((await kb.page.evaluate(() => document.activeElement?.textContent)) === 'Credits') break;
      }
      await kb.page.keyboard.press('Enter');
      await kb.page.getByTestId('credits-remaining').waitFor();
    } finally {
      await kb.close();
    }
  });
});
