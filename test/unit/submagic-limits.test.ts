import { describe, expect, it } from 'vitest';
import { SUBMAGIC_DEFAULT_TEMPLATES, SUBMAGIC_POLL_BUDGET, submagicTitle } from '../../src/adapters/engines/submagic/submagic-engine.ts';
import { SUBMAGIC_MAX_UPLOAD_BYTES } from '../../src/adapters/engines/submagic/submagic-limits.ts';
import { loadConfig } from '../../src/config.ts';
import { loadContract } from '../support/contract.ts';

// What the Submagic adapter sends, against what test/contracts/submagic/ says Submagic takes.
type Schema = { maxLength?: number; minLength?: number; maximum?: number; enum?: string[]; properties?: Record<string, Schema> };
const body = (name: string) => loadContract('submagic', name).request.body as Schema;

describe('Submagic limits, from its contract', () => {
  it('our project title fits the 1-100 characters create-project and upload-project take', () => {
    const title = submagicTitle('6f1c1c3a-1b2b-4c3d-8e9f-0a1b2c3d4e5f');
    for (const name of ['create-project', 'upload-project']) {
      expect(title.length).toBeLessThanOrEqual(body(name).properties!.title!.maxLength!);
      expect(title.length).toBeGreaterThanOrEqual(body(name).properties!.title!.minLength!);
    }
  });

  it('our upload cap is what upload-project takes, and our results are MP4', () => {
    const file = body('upload-project').properties!.file!.properties!;
    expect(SUBMAGIC_MAX_UPLOAD_BYTES).toBe(file.size!.maximum);
    expect(file.type!.enum).toContain('video/mp4');
  });

  it('every default template is a name (the check tells whether the account still lists it)', () => {
    for (const name of Object.values(SUBMAGIC_DEFAULT_TEMPLATES)) expect(name.length).toBeGreaterThanOrEqual(body('create-project').properties!.templateName!.minLength!);
  });

  it('the poll budget is the lower figure Submagic documents for GET /v1/projects/{id} (100 an hour), and SUBMAGIC_POLL_BUDGET changes it', () => {
    expect(SUBMAGIC_POLL_BUDGET).toEqual([{ requests: 100, perMs: 3_600_000 }]);
    expect(loadConfig({ SUBMAGIC_API_KEY: 'sk-x' }).upstream.submagic!.pollBudget).toEqual([{ requests: 100, perMs: 3_600_000 }]);
    expect(loadConfig({ SUBMAGIC_API_KEY: 'sk-x', SUBMAGIC_POLL_BUDGET: '500/3600' }).upstream.submagic!.pollBudget).toEqual([{ requests: 500, perMs: 3_600_000 }]);
    expect(() => loadConfig({ SUBMAGIC_API_KEY: 'sk-x', SUBMAGIC_POLL_BUDGET: '100 an hour' })).toThrow(/SUBMAGIC_POLL_BUDGET/);
  });
});
