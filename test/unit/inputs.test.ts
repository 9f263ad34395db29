import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import {
  brandCreate,
  creditsLimit,
  customAvatarCreate,
  MAX,
  pageQuery,
  productCreate,
  teamCreate,
} from '../../src/domain/inputs.ts';
import { describeIssues, parseInput } from '../../src/domain/validate.ts';

/** Parses and returns the AppError; fails the test if the input was accepted or something else was thrown. */
function refusal(schema: z.ZodType, input: unknown, where?: string): AppError {
  let result: unknown;
  try {
    result = parseInput(schema, input, where);
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error(`expected validation_error, but the input was accepted as ${JSON.stringify(result)}`);
}

/** Asserts a 400 validation_error whose message starts with the field name. */
function expectRefused(schema: z.ZodType, input: unknown, field: string, where?: string): AppError {
  const e = refusal(schema, input, where);
  expect(e.code).toBe('validation_error');
  expect(e.status).toBe(400);
  expect(e.message.startsWith(`${field}: `), `message ${JSON.stringify(e.message)} should name ${field}`).toBe(true);
  return e;
}

const chars = (n: number, c = 'a'): string => c.repeat(n);
const urlOfLength = (n: number): string => {
  const head = 'https://x.test/';
  return head + 'a'.repeat(n - head.length);
};

const NON_HTTP_URLS = [
  'ftp://files.example.com/a.png',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'data:image/png;base64,iVBORw0KGgo=',
  'mailto:someone@example.com',
  'ws://example.com/socket',
  'gopher://example.com/',
];
const NOT_URLS = ['', '   ', 'not a url', 'example.com/a.png', '//example.com/a.png', 'https://', 'http://'];
const NON_STRINGS: unknown[] = [123, 0, true, false, null, [], ['x'], {}, { url: 'https://x.test' }];

// ---------------------------------------------------------------------------------------------------------------------

describe('parseInput / describeIssues', () => {
  it('returns the parsed value when the input is valid', () => {
    expect(parseInput(pageQuery, { limit: '5', offset: '10' })).toEqual({ limit: 5, offset: 10 });
  });

  it('throws an AppError validation_error (400) naming the first failing field', () => {
    const e = expectRefused(pageQuery, { limit: '0', offset: '-1' }, 'limit');
    expect(e).toBeInstanceOf(AppError);
    expect(e.toBody()).toEqual({ error: { code: 'validation_error', message: e.message } });
  });

  it('prefixes the field with the location when one is given', () => {
    expectRefused(pageQuery, { limit: '0' }, 'query.limit', 'query');
  });

  it('names nested paths with dots', () => {
    expect(describeIssues([{ code: 'custom', path: ['a', 0, 'b'], message: 'is wrong', input: undefined }])).toBe('a.0.b: is wrong');
  });

  it('uses the bare message when there is no path and no location', () => {
    expect(describeIssues([{ code: 'custom', path: [], message: 'is wrong', input: undefined }])).toBe('is wrong');
    expect(describeIssues([{ code: 'custom', path: [], message: 'is wrong', input: undefined }], 'body')).toBe('body: is wrong');
  });

  it('answers "invalid request" when there are no issues', () => {
    expect(describeIssues([])).toBe('invalid request');
  });

  it('refuses a non-object body', () => {
    for (const body of [null, undefined, 'text', 42, [], true]) {
      const e = refusal(productCreate, body);
      expect(e.code).toBe('validation_error');
      expect(e.status).toBe(400);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------------

describe('pageQuery (limit / offset from query strings)', () => {
  it('defaults to limit 20 and offset 0', () => {
    expect(parseInput(pageQuery, {})).toEqual({ limit: 20, offset: 0 });
  });

  it('defaults each parameter independently', () => {
    expect(parseInput(pageQuery, { limit: '7' })).toEqual({ limit: 7, offset: 0 });
    expect(parseInput(pageQuery, { offset: '40' })).toEqual({ limit: 20, offset: 40 });
  });

  it.each([
    ['1', 1],
    ['20', 20],
    ['99', 99],
    ['100', 100],
    ['007', 7],
  ])('accepts limit %j as %i', (raw, value) => {
    expect(parseInput(pageQuery, { limit: raw }).limit).toBe(value);
  });

  it.each(['0', '101', '-1', '1.5', 'abc', '', ' 5', '5 ', '1e2', '+5', '0x10', '1,000', '１０', '1000000000000'])(
    'refuses limit %j naming limit',
    (raw) => {
      expectRefused(pageQuery, { limit: raw }, 'limit');
    },
  );

  it('refuses a repeated limit parameter (array) and a non-string limit', () => {
    expectRefused(pageQuery, { limit: ['1', '2'] }, 'limit');
    expectRefused(pageQuery, { limit: null }, 'limit');
  });

  it('mentions the allowed range 1-100 in the limit message', () => {
    expect(expectRefused(pageQuery, { limit: '101' }, 'limit').message).toContain('between 1 and 100');
  });

  it.each([
    ['0', 0],
    ['1', 1],
    ['1000', 1000],
    ['999999999', 999_999_999],
  ])('accepts offset %j as %i', (raw, value) => {
    expect(parseInput(pageQuery, { offset: raw }).offset).toBe(value);
  });

  it.each(['-1', '1.5', 'abc', '', ' 0', '1e3', '1000000001', '99999999999', '99999999999999999999999'])(
    'refuses offset %j naming offset',
    (raw) => {
      expectRefused(pageQuery, { offset: raw }, 'offset');
    },
  );

  it('accepts offset 1000000000, the maximum its own error message states', () => {
    // The refusal message says "must be an integer between 0 and 1000000000", so the bound itself must be accepted.
    const message = expectRefused(pageQuery, { offset: '1000000001' }, 'offset').message;
    expect(message).toContain('between 0 and 1000000000');
    expect(parseInput(pageQuery, { offset: '1000000000' }).offset).toBe(1_000_000_000);
  });

  it('ignores unrelated query parameters', () => {
    expect(parseInput(pageQuery, { limit: '3', type: 'image', status: 'failed' })).toEqual({ limit: 3, offset: 0 });
  });
});

// ---------------------------------------------------------------------------------------------------------------------

const product = {
  name: 'Trail Runner 2',
  description: 'A light running shoe',
  category: 'footwear',
  image_url: 'https://cdn.example.com/shoe.png',
};

describe('productCreate', () => {
  it('accepts the four required fields, defaulting currency to USD and leaving price and link unset', () => {
    expect(parseInput(productCreate, product)).toEqual({ ...product, currency: 'USD' });
  });

  it('accepts every optional field', () => {
    const full = { ...product, price: 129.99, currency: 'EUR', link: 'https://shop.example.com/p/1' };
    expect(parseInput(productCreate, full)).toEqual(full);
  });

  it.each(['name', 'description', 'category', 'image_url'] as const)('requires %s', (field) => {
    const { [field]: _omitted, ...rest } = product;
    expectRefused(productCreate, rest, field);
  });

  it.each(['name', 'description', 'category'] as const)('refuses an empty or whitespace-only %s', (field) => {
    for (const blank of ['', ' ', '   ', '\t', '\n', ' \r\n\t ']) {
      const e = expectRefused(productCreate, { ...product, [field]: blank }, field);
      expect(e.message).toContain('must not be empty');
    }
  });

  it.each(['name', 'description', 'category', 'image_url'] as const)('refuses a non-string %s', (field) => {
    for (const value of NON_STRINGS) expectRefused(productCreate, { ...product, [field]: value }, field);
  });

  it('trims surrounding whitespace from text fields and URLs', () => {
    const parsed = parseInput(productCreate, {
      name: '  Shoe  ',
      description: '\tLight\n',
      category: ' footwear ',
      image_url: '  https://cdn.example.com/shoe.png  ',
      link: ' https://shop.example.com/ ',
    });
    expect(parsed.name).toBe('Shoe');
    expect(parsed.description).toBe('Light');
    expect(parsed.category).toBe('footwear');
    expect(parsed.image_url).toBe('https://cdn.example.com/shoe.png');
    expect(parsed.link).toBe('https://shop.example.com/');
  });

  it('accepts http and https image URLs, in any case', () => {
    for (const url of ['http://cdn.example.com/a.png', 'https://cdn.example.com/a.png', 'HTTPS://CDN.EXAMPLE.COM/A.PNG', 'https://cdn.example.com:8443/a.png?x=1#y']) {
      expect(parseInput(productCreate, { ...product, image_url: url }).image_url).toBe(url);
    }
  });

  it.each(NON_HTTP_URLS)('refuses image_url %j (not http(s))', (url) => {
    const e = expectRefused(productCreate, { ...product, image_url: url }, 'image_url');
    expect(e.message).toContain('http(s)');
  });

  it.each(NOT_URLS)('refuses image_url %j (not a URL)', (url) => {
    expectRefused(productCreate, { ...product, image_url: url }, 'image_url');
  });

  it('accepts price 0, fractional prices and the maximum, and null', () => {
    for (const price of [0, 0.01, 19.99, 1000, 999_999_999_999.99]) expect(parseInput(productCreate, { ...product, price }).price).toBe(price);
    expect(parseInput(productCreate, { ...product, price: null }).price).toBeNull();
  });

  it('refuses a negative price', () => {
    for (const price of [-0.01, -1, -1e12]) {
      const e = expectRefused(productCreate, { ...product, price }, 'price');
      expect(e.message).toContain('must not be negative');
    }
  });

  it('refuses a price the column cannot hold (12 digits and 2 decimals): 1e12 was a 500 found by the REST fuzzer', () => {
    expectRefused(productCreate, { ...product, price: 1e12 }, 'price');
    expectRefused(productCreate, { ...product, price: 999_999_999_999.995 }, 'price');
  });

  it('refuses non-number prices, including numeric strings', () => {
    for (const price of ['10', '0', '', 'ten', true, [], {}, [10]]) expectRefused(productCreate, { ...product, price }, 'price');
  });

  it('refuses NaN and infinite prices (impossible in JSON, refused anyway)', () => {
    for (const price of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expectRefused(productCreate, { ...product, price }, 'price');
    }
  });

  it('normalises a lower-case or padded currency to upper case', () => {
    expect(parseInput(productCreate, { ...product, currency: 'eur' }).currency).toBe('EUR');
    expect(parseInput(productCreate, { ...product, currency: 'Gbp' }).currency).toBe('GBP');
    expect(parseInput(productCreate, { ...product, currency: ' jpy ' }).currency).toBe('JPY');
    expect(parseInput(productCreate, { ...product, currency: 'USD' }).currency).toBe('USD');
  });

  it.each(['XYZ', 'US', 'USDD', '', '   ', 'E', 'EURO', '$', '978'])('refuses currency %j', (currency) => {
    const e = expectRefused(productCreate, { ...product, currency }, 'currency');
    expect(e.message).toContain('ISO 4217');
  });

  it('refuses a non-string currency', () => {
    for (const currency of [978, true, ['USD'], {}]) expectRefused(productCreate, { ...product, currency }, 'currency');
  });

  it('accepts an http(s) link, null, or no link', () => {
    expect(parseInput(productCreate, { ...product, link: 'http://shop.example.com/p' }).link).toBe('http://shop.example.com/p');
    expect(parseInput(productCreate, { ...product, link: null }).link).toBeNull();
    expect(parseInput(productCreate, product).link).toBeUndefined();
  });

  it.each([...NON_HTTP_URLS, ...NOT_URLS])('refuses link %j', (link) => {
    expectRefused(productCreate, { ...product, link }, 'link');
  });

  it('refuses a non-string link', () => {
    for (const link of [1, true, [], {}]) expectRefused(productCreate, { ...product, link }, 'link');
  });

  it('ignores and strips unknown fields', () => {
    const parsed = parseInput(productCreate, {
      ...product,
      id: '2f1c9a54-6f1e-4a39-9b59-1f0d6c1e8a11',
      team_id: 'someone-else',
      created_at: '2020-01-01T00:00:00Z',
      __proto__: { polluted: true },
    });
    expect(parsed).toEqual({ ...product, currency: 'USD' });
    expect(Object.keys(parsed).sort()).toEqual(['category', 'currency', 'description', 'image_url', 'name']);
  });

  it.each([
    ['name', MAX.productName],
    ['description', MAX.productDescription],
    ['category', MAX.productCategory],
  ] as const)('accepts a %s of exactly its maximum length (%i characters) and refuses one more', (field, max) => {
    expect(parseInput(productCreate, { ...product, [field]: chars(max) })[field]).toBe(chars(max));
    const e = expectRefused(productCreate, { ...product, [field]: chars(max + 1) }, field);
    expect(e.message).toContain(`at most ${max} characters`);
  });

  it('counts text lengths in characters, not UTF-16 units, as sent (the maxLength the document declares), then trims', () => {
    expect(parseInput(productCreate, { ...product, name: chars(MAX.productName, '😀') }).name).toBe(chars(MAX.productName, '😀'));
    expectRefused(productCreate, { ...product, name: chars(MAX.productName + 1, '😀') }, 'name');
    expect(parseInput(productCreate, { ...product, name: `  ${chars(MAX.productName - 4)}  ` }).name).toBe(chars(MAX.productName - 4));
    expectRefused(productCreate, { ...product, name: `  ${chars(MAX.productName)}  ` }, 'name');
  });

  it('accepts URLs up to 2048 characters and refuses longer ones', () => {
    expect(MAX.url).toBe(2048);
    expect(parseInput(productCreate, { ...product, image_url: urlOfLength(MAX.url) }).image_url).toHaveLength(MAX.url);
    expectRefused(productCreate, { ...product, image_url: urlOfLength(MAX.url + 1) }, 'image_url');
    expect(parseInput(productCreate, { ...product, link: urlOfLength(MAX.url) }).link).toHaveLength(MAX.url);
    expectRefused(productCreate, { ...product, link: urlOfLength(MAX.url + 1) }, 'link');
  });
});

// ---------------------------------------------------------------------------------------------------------------------

const avatar = { name: 'Maya', image_url: 'https://cdn.example.com/face.jpg' };

describe('customAvatarCreate', () => {
  it('accepts name and image_url alone', () => {
    expect(parseInput(customAvatarCreate, avatar)).toEqual(avatar);
  });

  it('accepts every optional field', () => {
    const full = { ...avatar, description: 'Friendly presenter', gender: 'female', age_group: 'young_adult' };
    expect(parseInput(customAvatarCreate, full)).toEqual(full);
  });

  it('requires name and image_url', () => {
    expectRefused(customAvatarCreate, { image_url: avatar.image_url }, 'name');
    expectRefused(customAvatarCreate, { name: avatar.name }, 'image_url');
  });

  it('accepts a name of 50 characters and refuses 51', () => {
    expect(MAX.avatarName).toBe(50);
    expect(parseInput(customAvatarCreate, { ...avatar, name: chars(50) }).name).toBe(chars(50));
    const e = expectRefused(customAvatarCreate, { ...avatar, name: chars(51) }, 'name');
    expect(e.message).toContain('at most 50 characters');
  });

  it('counts the name in characters, not UTF-16 units: 50 emoji accepted, 51 refused', () => {
    expect(chars(50, '😀').length).toBe(100);
    expect(parseInput(customAvatarCreate, { ...avatar, name: chars(50, '😀') }).name).toBe(chars(50, '😀'));
    expectRefused(customAvatarCreate, { ...avatar, name: chars(51, '😀') }, 'name');
    expect(parseInput(customAvatarCreate, { ...avatar, name: chars(50, 'é') }).name).toBe(chars(50, 'é'));
  });

  it('counts the name as sent, trims it, and refuses a blank or non-string name', () => {
    expect(parseInput(customAvatarCreate, { ...avatar, name: ` ${chars(48)} ` }).name).toBe(chars(48));
    expectRefused(customAvatarCreate, { ...avatar, name: ` ${chars(50)} ` }, 'name');
    for (const name of ['', '  ', '\n']) expectRefused(customAvatarCreate, { ...avatar, name }, 'name');
    for (const name of NON_STRINGS) expectRefused(customAvatarCreate, { ...avatar, name }, 'name');
  });

  it('makes description optional: absent, null, empty and up to 500 characters accepted', () => {
    expect(parseInput(customAvatarCreate, avatar).description).toBeUndefined();
    expect(parseInput(customAvatarCreate, { ...avatar, description: null }).description).toBeNull();
    expect(parseInput(customAvatarCreate, { ...avatar, description: '' }).description).toBe('');
    expect(parseInput(customAvatarCreate, { ...avatar, description: chars(MAX.avatarDescription) }).description).toBe(
      chars(MAX.avatarDescription),
    );
    expect(parseInput(customAvatarCreate, { ...avatar, description: chars(MAX.avatarDescription, '😀') }).description).toBe(
      chars(MAX.avatarDescription, '😀'),
    );
  });

  it('refuses a description over 500 characters or of a non-string type', () => {
    expectRefused(customAvatarCreate, { ...avatar, description: chars(MAX.avatarDescription + 1) }, 'description');
    for (const description of [1, true, [], {}]) expectRefused(customAvatarCreate, { ...avatar, description }, 'description');
  });

  it.each([...NON_HTTP_URLS, ...NOT_URLS])('refuses image_url %j', (image_url) => {
    expectRefused(customAvatarCreate, { ...avatar, image_url }, 'image_url');
  });

  it('refuses a non-string image_url and one over 2048 characters', () => {
    for (const image_url of NON_STRINGS) expectRefused(customAvatarCreate, { ...avatar, image_url }, 'image_url');
    expectRefused(customAvatarCreate, { ...avatar, image_url: urlOfLength(MAX.url + 1) }, 'image_url');
  });

  it('accepts only the gender and age_group values of the Avatar resource', () => {
    for (const gender of ['male', 'female']) expect(parseInput(customAvatarCreate, { ...avatar, gender }).gender).toBe(gender);
    for (const age_group of ['kid', 'young_adult', 'adult', 'senior']) {
      expect(parseInput(customAvatarCreate, { ...avatar, age_group }).age_group).toBe(age_group);
    }
    for (const gender of ['Male', 'other', '', 1]) expectRefused(customAvatarCreate, { ...avatar, gender }, 'gender');
    for (const age_group of ['teen', 'Adult', '', 1]) expectRefused(customAvatarCreate, { ...avatar, age_group }, 'age_group');
  });

  it('strips unknown fields such as avatar_type and thumbnail_url', () => {
    const parsed = parseInput(customAvatarCreate, { ...avatar, avatar_type: 'platform', thumbnail_url: 'https://x.test/t.png' });
    expect(parsed).toEqual(avatar);
  });
});

// ---------------------------------------------------------------------------------------------------------------------

describe('brandCreate', () => {
  it('accepts a name alone', () => {
    expect(parseInput(brandCreate, { name: 'Acme' })).toEqual({ name: 'Acme' });
  });

  it('accepts every field', () => {
    const full = {
      name: 'Acme',
      description: 'We make anvils',
      industry: 'tools',
      website_url: 'https://acme.example.com',
      brand_voice: 'dry',
      target_audience: 'coyotes',
      brand_color_primary: '#A1B2C3',
      brand_color_accent: '#abc',
      logo_url: 'https://acme.example.com/logo.png',
      reference_image_url: 'http://acme.example.com/ref.jpg',
    };
    expect(parseInput(brandCreate, full)).toEqual(full);
  });

  it('requires a non-blank string name of at most 200 characters', () => {
    expectRefused(brandCreate, {}, 'name');
    for (const name of ['', '   ', ...NON_STRINGS]) expectRefused(brandCreate, { name }, 'name');
    expect(parseInput(brandCreate, { name: chars(200) }).name).toBe(chars(200));
    expectRefused(brandCreate, { name: chars(201) }, 'name');
  });

  it.each(['brand_color_primary', 'brand_color_accent'] as const)('accepts hex colours in %s', (field) => {
    for (const colour of ['#abc', '#ABC', '#A1B2C3', '#a1b2c3', '#000000', '#fff']) {
      expect(parseInput(brandCreate, { name: 'b', [field]: colour })[field]).toBe(colour);
    }
    expect(parseInput(brandCreate, { name: 'b', [field]: ' #abc ' })[field]).toBe('#abc');
    expect(parseInput(brandCreate, { name: 'b', [field]: null })[field]).toBeNull();
  });

  it.each(['brand_color_primary', 'brand_color_accent'] as const)('refuses malformed colours in %s', (field) => {
    for (const colour of ['123456', '#12345', '#ggg', '#abcd', '#1234567', '##abc', 'red', 'rgb(0,0,0)', '', '#', 0x123456]) {
      expectRefused(brandCreate, { name: 'b', [field]: colour }, field);
    }
  });

  it.each(['website_url', 'logo_url', 'reference_image_url'] as const)('accepts http(s) or null in %s and refuses anything else', (field) => {
    expect(parseInput(brandCreate, { name: 'b', [field]: 'https://acme.example.com/x' })[field]).toBe('https://acme.example.com/x');
    expect(parseInput(brandCreate, { name: 'b', [field]: 'http://acme.example.com/x' })[field]).toBe('http://acme.example.com/x');
    expect(parseInput(brandCreate, { name: 'b', [field]: null })[field]).toBeNull();
    for (const url of [...NON_HTTP_URLS, ...NOT_URLS, 12, true, urlOfLength(MAX.url + 1)]) {
      expectRefused(brandCreate, { name: 'b', [field]: url }, field);
    }
  });

  it.each(['description', 'industry', 'brand_voice', 'target_audience'] as const)(
    'accepts %s up to 2000 characters (or null) and refuses more',
    (field) => {
      expect(parseInput(brandCreate, { name: 'b', [field]: chars(MAX.brandText) })[field]).toBe(chars(MAX.brandText));
      expect(parseInput(brandCreate, { name: 'b', [field]: chars(MAX.brandText, '😀') })[field]).toBe(chars(MAX.brandText, '😀'));
      expect(parseInput(brandCreate, { name: 'b', [field]: null })[field]).toBeNull();
      expectRefused(brandCreate, { name: 'b', [field]: chars(MAX.brandText + 1) }, field);
      expectRefused(brandCreate, { name: 'b', [field]: 5 }, field);
    },
  );

  it('strips unknown fields', () => {
    expect(parseInput(brandCreate, { name: 'b', team_id: 'x', id: 'y' })).toEqual({ name: 'b' });
  });
});

// ---------------------------------------------------------------------------------------------------------------------

describe('teamCreate', () => {
  it('defaults the tier to starter and leaves credits_limit unset', () => {
    expect(parseInput(teamCreate, { name: 'Marketing' })).toEqual({ name: 'Marketing', tier: 'starter' });
  });

  it.each(['free', 'starter', 'pro', 'business'])('accepts tier %s', (tier) => {
    expect(parseInput(teamCreate, { name: 't', tier }).tier).toBe(tier);
  });

  it.each(['enterprise', 'Starter', 'PRO', '', 1, null])('refuses tier %j', (tier) => {
    expectRefused(teamCreate, { name: 't', tier }, 'tier');
  });

  it('requires a non-blank name of at most 200 characters', () => {
    expectRefused(teamCreate, {}, 'name');
    expectRefused(teamCreate, { name: '  ' }, 'name');
    expect(parseInput(teamCreate, { name: chars(200) }).name).toBe(chars(200));
    expectRefused(teamCreate, { name: chars(201) }, 'name');
  });

  it('accepts an integer credits_limit from 0 to 2,000,000,000', () => {
    for (const credits_limit of [0, 1, 1000, 2_000_000_000]) {
      expect(parseInput(teamCreate, { name: 't', credits_limit }).credits_limit).toBe(credits_limit);
    }
  });

  it('refuses a negative, fractional, too large or non-number credits_limit', () => {
    for (const credits_limit of [-1, 1.5, 0.1, 2_000_000_001, Number.NaN, Number.POSITIVE_INFINITY, '100', null, true]) {
      expectRefused(teamCreate, { name: 't', credits_limit }, 'credits_limit');
    }
  });

  it('applies the same rules to a bare credits limit', () => {
    expect(parseInput(creditsLimit, 0)).toBe(0);
    expect(parseInput(creditsLimit, 2_000_000_000)).toBe(2_000_000_000);
    for (const bad of [-1, 1.5, 2_000_000_001, '5', null]) {
      const e = refusal(creditsLimit, bad, 'credits_limit');
      expect(e.code).toBe('validation_error');
      expect(e.message.startsWith('credits_limit: ')).toBe(true);
    }
  });
});
