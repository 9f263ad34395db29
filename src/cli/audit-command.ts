import type { Command } from 'commander';
import type { AuditLine } from '../services/audit.ts';
import { print } from './output.ts';
import { withAdmin } from './with-app.ts';

type Options = { team: string; action?: string; actor?: string; actorKind?: string; since?: string; until?: string; limit?: string; offset?: string; json?: boolean };

const who = (a: AuditLine['actor']): string =>
  a.kind === 'user' ? `user ${a.email ?? a.user_id}` : a.kind === 'api_key' ? `key ${a.key_hint ?? a.key_id}${a.key_name ? ` (${a.key_name})` : ''}` : (a.name ?? 'operator');

/** `adforge audit --team ID`: a team's audit log, newest first, for operators. */
export function registerAuditCommand(program: Command): void {
  program
    .command('audit')
    .description("a team's audit log, newest first: who changed its keys, webhooks, members, sessions, credits, retention or data, when and from where")
    .requiredOption('--team <team_id>')
    .option('--action <action>', 'only this action, e.g. api_key.revoked')
    .option('--actor <id>', "only this person's or key's lines")
    .option('--actor-kind <kind>', 'user | api_key | operator')
    .option('--since <instant>', 'lines at or after this ISO 8601 instant')
    .option('--until <instant>', 'lines before this ISO 8601 instant')
    .option('--limit <n>', 'lines per page (1-100)', '100')
    .option('--offset <n>', 'lines to skip', '0')
    .option('--json', 'print one JSON object: {data, pagination}')
    .action((o: Options) =>
      withAdmin(o, ['audit'], async (admin) => {
        const page = await admin.audit.forOperator(o.team, {
          action: o.action,
          actor_id: o.actor,
          actor_kind: o.actorKind,
          since: o.since,
          until: o.until,
          limit: o.limit,
          offset: o.offset,
        });
        if (o.json) return print({ ...page }, o);
        for (const l of page.data) {
          const from = [l.ip, l.user_agent].filter(Boolean).join(' ');
          process.stdout.write(`${l.created_at}  ${l.action.padEnd(24)}  ${who(l.actor)}${from ? `  from ${from}` : ''}  ${JSON.stringify(l.detail)}\n`);
        }
        const { total, offset } = page.pagination;
        process.stdout.write(`${page.data.length ? `lines ${offset + 1}-${offset + page.data.length}` : 'no lines'} of ${total}\n`);
      }),
    );
}
