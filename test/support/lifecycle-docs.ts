import { PROVIDER_MODULES } from '../../src/adapters/engines/providers.ts';
import type { LifecycleTable } from '../../src/adapters/engines/lifecycle.ts';
import { ELEVENLABS_LIFECYCLE } from '../../src/adapters/engines/speech/elevenlabs-lifecycle.ts';

/** Every provider's lifecycle table, in the order docs/providers.md shows them: the routed providers, then speech. */
export const ALL_LIFECYCLE_TABLES: readonly LifecycleTable[] = [...PROVIDER_MODULES.map((p) => p.lifecycle), ELEVENLABS_LIFECYCLE];

export const LIFECYCLE_BEGIN = '<!-- lifecycle tables: made from each provider folder\'s *-lifecycle.ts; test/unit/docs-lifecycle.test.ts holds them equal -->';
export const LIFECYCLE_END = '<!-- end of lifecycle tables -->';

const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** The tables as docs/providers.md shows them, between the two markers. */
export function renderLifecycleTables(tables: readonly LifecycleTable[] = ALL_LIFECYCLE_TABLES): string {
  const parts: string[] = [];
  for (const t of tables) {
    parts.push(`**${t.provider}** (sources read ${t.read}${t.mapping ? `; ${t.mapping} may name another model` : ''})`);
    if (t.note) parts.push(t.note);
    if (t.entries.length) {
      const rows = t.entries.map((e) => {
        const status = e.status === 'deprecated' && e.shutdown ? `deprecated (shutdown ${e.shutdown})` : e.status;
        const source = e.note ? `${e.source}. ${e.note}` : e.source;
        return `| \`${e.id}\` | ${e.serves.join(', ') || '-'} | ${status} | ${e.date} | ${cell(source)} | ${e.successor ? `\`${e.successor}\`` : '-'} |`;
      });
      parts.push(['| model or endpoint | ours | status | date | source | successor |', '|---|---|---|---|---|---|', ...rows].join('\n'));
    }
  }
  return [LIFECYCLE_BEGIN, ...parts, LIFECYCLE_END].join('\n\n');
}
