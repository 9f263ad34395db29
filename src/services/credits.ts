import { AppError } from '../domain/errors.ts';
import { z } from 'zod';
import { creditsLimit, instant, pageQuery, uuid } from '../domain/inputs.ts';
import { paginated, type Paginated } from './paginated.ts';
import { parseInput } from '../domain/validate.ts';
import type { Team } from '../db/types.ts';
import { appendLedger, listLedger, spendByDay, type SpendRow } from '../repositories/ledger.ts';
import { findTeam, lockTeam, resetPeriod, setCreditsLimit } from '../repositories/teams.ts';
import { recordTopUp, toppedUpSince } from '../repositories/credit-top-ups.ts';
import { findTeamUser } from '../repositories/users.ts';
import type { Deps } from './deps.ts';
import type { ClientInfo, Principal } from './principal.ts';
import { operatorActor, recordAudit, type AuditActor } from './audit.ts';

const MAX_LIMIT = 2_000_000_000;
const WHOLE_TOP_UP = 'must be a whole number from 1 to 1000000';
const topUpInput = z.object({ credits: z.number({ error: WHOLE_TOP_UP }).int(WHOLE_TOP_UP).min(1, WHOLE_TOP_UP).max(1_000_000, WHOLE_TOP_UP) });
const spendingQuery = z.object({ days: z.number().int('must be a whole number from 1 to 366').min(1, 'must be a whole number from 1 to 366').max(366, 'must be a whole number from 1 to 366').default(30) });
import { requireUuid } from './ids.ts';

export interface CreditBalance {
  credits_used: number;
  credits_limit: number;
  credits_remaining: number;
}

export function balanceOf(team: Pick<Team, 'credits_used' | 'credits_limit'>): CreditBalance {
  return {
    credits_used: team.credits_used,
    credits_limit: team.credits_limit,
    credits_remaining: team.credits_limit - team.credits_used,
  };
}

export const ledgerQuery = pageQuery.extend({
  generation_id: uuid.optional(),
  kind: z.enum(['debit', 'refund', 'period_reset', 'limit_set'], { message: 'must be debit, refund, period_reset or limit_set' }).optional(),
  since: instant.optional().meta({ description: 'lines written at or after this instant' }),
  until: instant.optional().meta({ description: 'lines written before this instant' }),
});

/** A line of the ledger as the API shows it. */
export interface LedgerEntry {
  id: string;
  kind: 'debit' | 'refund' | 'period_reset' | 'limit_set';
  amount: number;
  generation_id: string | null;
  subject_type: string | null;
  subject_id: string | null;
  note: string | null;
  created_at: string;
  credits_used_after: number;
}

export function createCreditService({ db, config }: Pick<Deps, 'db'> & { config?: Pick<Deps['config'], 'ownerTopUp' | 'ownerTopUpMaxPerPeriod'> }) {
  return {
    async balance(p: Principal): Promise<CreditBalance> {
      const team = await findTeam(db, p.teamId);
      if (!team) throw new AppError('not_found', 'Team not found');
      return balanceOf(team);
    },

    /**
     * The team's ledger, newest first: debits (positive), refunds (negative), period resets (what
     * the period used, negative) and limit changes (0), each with the credits used after it. All
     * lines sum to `credits_used`.
     */
    /** What the team spent per day and per type over the last `days` days (1-366), for the dashboard's chart. */
    async spending(p: Principal, query: unknown): Promise<SpendRow[]> {
      const { days } = parseInput(spendingQuery, query ?? {});
      const since = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - (days - 1) * 86_400_000);
      return spendByDay(db, p.teamId, since);
    },

    async ledger(p: Principal, query: unknown): Promise<Paginated<LedgerEntry>> {
      const q = parseInput(ledgerQuery, query ?? {});
      const { rows, total } = await listLedger(db, p.teamId, { generationId: q.generation_id, kind: q.kind, since: q.since, until: q.until }, q);
      const lines = rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        amount: r.amount,
        generation_id: r.subject_type === 'generation' ? r.subject_id : null,
        subject_type: r.subject_type,
        subject_id: r.subject_id,
        note: r.note,
        created_at: r.created_at.toISOString(),
        credits_used_after: r.used_after,
      }));
      return paginated(lines, total, q);
    },

    /** Admin: a new limit for the current period. It cannot go below what is already used. */
    async setLimit(teamId: string, limit: unknown, actor: AuditActor = operatorActor()): Promise<Team> {
      const id = requireUuid(teamId, 'team');
      const value = parseInput(creditsLimit, limit, 'limit');
      return db.transaction().execute(async (trx) => {
        const team = await lockTeam(trx, id);
        if (!team) throw new AppError('not_found', 'Team not found');
        if (value < team.credits_used) {
          throw new AppError(
            'validation_error',
            `limit: ${value} is below the ${team.credits_used} credits already used this period; reset the period first`,
          );
        }
        const updated = await setCreditsLimit(trx, id, value);
        await appendLedger(trx, { team_id: id, kind: 'limit_set', amount: 0, note: `limit ${team.credits_limit} -> ${value}` });
        await recordAudit(trx, id, actor, 'credits.limit_set', { limit_before: team.credits_limit, limit_after: value });
        return updated!;
      });
    },

    /**
     * Settings > Credits: an owner adds credits to the current period's limit. Off unless the
     * operator sets OWNER_TOP_UP=true; then the team's owners together add at most
     * OWNER_TOP_UP_MAX_PER_PERIOD in a billing period, counted under the team's row lock so parallel
     * top-ups cannot pass it. Each one is kept (credit_top_ups) and its ledger line names the user.
     */
    async topUp(actor: { teamId: string; userId: string; role: string; client?: ClientInfo | undefined }, input: unknown): Promise<CreditBalance> {
      if (!config?.ownerTopUp) throw new AppError('forbidden', 'Adding credits from the dashboard is turned off on this server: ask your operator');
      if (actor.role !== 'owner') throw new AppError('forbidden', 'Only a team owner can add credits');
      const { credits } = parseInput(topUpInput, input);
      const max = config.ownerTopUpMaxPerPeriod;
      return db.transaction().execute(async (trx) => {
        const team = (await lockTeam(trx, actor.teamId))!;
        const left = max - (await toppedUpSince(trx, team.id, team.period_started_at));
        if (credits > left) throw new AppError('validation_error', `credits: at most ${Math.max(0, left)} more can be added this period (the server allows ${max} a period)`);
        const limit = team.credits_limit + credits;
        if (limit > MAX_LIMIT) throw new AppError('validation_error', `credits: the limit would pass ${MAX_LIMIT}`);
        const user = (await findTeamUser(trx, team.id, actor.userId))!;
        await setCreditsLimit(trx, team.id, limit);
        await recordTopUp(trx, { team_id: team.id, user_id: actor.userId, credits });
        await appendLedger(trx, {
          team_id: team.id,
          kind: 'limit_set',
          amount: 0,
          subject_type: 'user',
          subject_id: actor.userId,
          note: `top-up +${credits} by user ${actor.userId} (${user.email}): limit ${team.credits_limit} -> ${limit}`,
        });
        await recordAudit(trx, team.id, { kind: 'user', userId: actor.userId, client: actor.client }, 'credits.topped_up', { credits, limit_before: team.credits_limit, limit_after: limit });
        return { credits_used: team.credits_used, credits_limit: limit, credits_remaining: limit - team.credits_used };
      });
    },

    /** What an owner may still add this period; null when top-ups are off or the caller is no owner. */
    async topUpAllowance(actor: { teamId: string; role: string } | undefined): Promise<number | null> {
      if (!config?.ownerTopUp || actor?.role !== 'owner') return null;
      const team = await findTeam(db, actor.teamId);
      if (!team) return null;
      return Math.max(0, config.ownerTopUpMaxPerPeriod - (await toppedUpSince(db, team.id, team.period_started_at)));
    },

    /** Admin: start a new billing period; the ledger keeps what the old one used. */
    async resetPeriod(teamId: string, actor: AuditActor = operatorActor()): Promise<Team> {
      const id = requireUuid(teamId, 'team');
      return db.transaction().execute(async (trx) => {
        const team = await lockTeam(trx, id);
        if (!team) throw new AppError('not_found', 'Team not found');
        const updated = await resetPeriod(trx, id);
        await appendLedger(trx, {
          team_id: id,
          kind: 'period_reset',
          amount: -team.credits_used,
          note: `period started ${team.period_started_at.toISOString()} used ${team.credits_used}`,
        });
        await recordAudit(trx, id, actor, 'credits.period_reset', { credits_used_before: team.credits_used, period_started_before: team.period_started_at.toISOString() });
        return updated!;
      });
    },
  };
}
export type CreditService = ReturnType<typeof createCreditService>;
