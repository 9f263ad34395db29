import { AppError } from '../domain/errors.ts';
import { creditsLimit } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import type { Team } from '../db/types.ts';
import { appendLedger } from '../repositories/ledger.ts';
import { findTeam, lockTeam, resetPeriod, setCreditsLimit } from '../repositories/teams.ts';
import type { Deps, Principal } from './context.ts';
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

export function createCreditService({ db }: Pick<Deps, 'db'>) {
  return {
    async balance(p: Principal): Promise<CreditBalance> {
      const team = await findTeam(db, p.teamId);
      if (!team) throw new AppError('not_found', 'Team not found');
      return balanceOf(team);
    },

    /** Admin: a new limit for the current period. It cannot go below what is already used. */
    async setLimit(teamId: string, limit: unknown): Promise<Team> {
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
        return updated!;
      });
    },

    /** Admin: start a new billing period; the ledger keeps what the old one used. */
    async resetPeriod(teamId: string): Promise<Team> {
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
        return updated!;
      });
    },
  };
}
export type CreditService = ReturnType<typeof createCreditService>;
