import { AppError } from '../domain/errors.ts';
import { canManage, digestSecret, email as emailSchema, LINK_TTL_MS, newSecret, newUser, ROLES, type Role } from '../domain/dashboard-users.ts';
import { parseInput } from '../domain/validate.ts';
import { z } from 'zod';
import type { Db } from '../db/pool.ts';
import type { UserRow } from '../db/types.ts';
import { findTeam } from '../repositories/teams.ts';
import { deleteUserSessions, insertSignInLink } from '../repositories/sessions.ts';
import { deleteUser, findTeamUser, findUserByEmail, insertUser, listTeamUsers, lockOwners, setUserRole } from '../repositories/users.ts';
import type { Deps } from './deps.ts';
import { requireUuid } from './ids.ts';
import type { DashboardPrincipal } from './sessions.ts';
import { actorOf, operatorActor, recordAudit, type AuditActor } from './audit.ts';

export interface MemberView {
  id: string;
  email: string;
  role: Role;
  /** False until the person has followed their link and chosen a password. */
  active: boolean;
  created_at: string;
}

export interface SignInLink {
  user: MemberView;
  /** Shown once: the link opens one session and sets the password. */
  url: string;
  expires_at: string;
}

const memberView = (u: UserRow): MemberView => ({ id: u.id, email: u.email, role: u.role, active: u.password_hash !== null, created_at: u.created_at.toISOString() });
const roleInput = z.object({ role: z.enum(ROLES, { message: "must be 'owner' or 'member'" }) });

/** The people of a team: made by the operator's CLI or invited by an owner, each with a one-time link. */
export function createMemberService({ db, config }: Pick<Deps, 'db' | 'config'>) {
  async function link(trx: Db, user: UserRow, purpose: 'sign_in' | 'invite', createdBy: string | null): Promise<SignInLink> {
    const token = newSecret();
    const expires = new Date(Date.now() + LINK_TTL_MS[purpose]);
    await insertSignInLink(trx, { token_digest: digestSecret(token), user_id: user.id, purpose, created_by: createdBy, expires_at: expires });
    // In the fragment: never sent to a server, so it stays out of access logs and Referer headers.
    return { user: memberView(user), url: `${config.publicBaseUrl}/welcome#${token}`, expires_at: expires.toISOString() };
  }

  function requireOwner(actor: DashboardPrincipal): void {
    if (!canManage(actor.role)) throw new AppError('forbidden', 'Only a team owner can manage members');
  }

  async function create(teamId: string, input: unknown, purpose: 'sign_in' | 'invite', createdBy: string | null, actor: AuditActor): Promise<SignInLink> {
    const u = parseInput(newUser, input);
    return db.transaction().execute(async (trx) => {
      // The unique index answers a taken address, whoever raced to it.
      const user = await insertUser(trx, { team_id: teamId, email: u.email, role: u.role }).catch((e: unknown) => {
        if ((e as { code?: string }).code === '23505') throw new AppError('conflict', 'A user with this email already exists');
        throw e;
      });
      await recordAudit(trx, teamId, actor, 'member.invited', { user_id: user.id, email: user.email, role: user.role });
      return link(trx, user, purpose, createdBy);
    });
  }

  /** Owners cannot take the last owner away: the team would have nobody to manage it. */
  async function withOwnersKept<T>(actor: DashboardPrincipal, userId: string, change: (u: UserRow, owners: string[], trx: Db) => Promise<T>): Promise<T> {
    requireOwner(actor);
    const id = requireUuid(userId, 'user');
    return db.transaction().execute(async (trx) => {
      const owners = await lockOwners(trx, actor.teamId);
      const user = await findTeamUser(trx, actor.teamId, id);
      if (!user) throw new AppError('not_found', 'Member not found');
      return change(user, owners, trx);
    });
  }

  return {
    /** `adforge user create`: a user of the team and the one-time link that lets them in. */
    async createUser(teamId: string, input: unknown): Promise<SignInLink> {
      const team = await findTeam(db, requireUuid(teamId, 'team'));
      if (!team) throw new AppError('not_found', 'Team not found');
      return create(team.id, input, 'sign_in', null, operatorActor());
    },

    /** `adforge user link`: a fresh one-time link for someone who lost theirs or their password. */
    async newSignInLink(input: unknown): Promise<SignInLink> {
      const address = parseInput(z.object({ email: emailSchema }), input).email;
      const user = await findUserByEmail(db, address);
      if (!user) throw new AppError('not_found', 'No user with this email');
      return db.transaction().execute(async (trx) => {
        await recordAudit(trx, user.team_id, operatorActor(), 'member.link_issued', { user_id: user.id, email: user.email });
        return link(trx, user, 'sign_in', null);
      });
    },

    list: async (actor: DashboardPrincipal): Promise<MemberView[]> => (await listTeamUsers(db, actor.teamId)).map(memberView),

    async invite(actor: DashboardPrincipal, input: unknown): Promise<SignInLink> {
      requireOwner(actor);
      return create(actor.teamId, input, 'invite', actor.userId, actorOf(actor));
    },

    setRole(actor: DashboardPrincipal, userId: string, input: unknown): Promise<MemberView> {
      const { role } = parseInput(roleInput, input);
      return withOwnersKept(actor, userId, async (user, owners, trx) => {
        if (role === 'member' && owners.length === 1 && owners[0] === user.id) throw new AppError('conflict', 'The team needs at least one owner');
        if (user.role !== role) {
          await recordAudit(trx, actor.teamId, actorOf(actor), 'member.role_changed', { user_id: user.id, email: user.email, role_before: user.role, role_after: role });
        }
        return memberView((await setUserRole(trx, user.id, role))!);
      });
    },

    remove(actor: DashboardPrincipal, userId: string): Promise<MemberView> {
      return withOwnersKept(actor, userId, async (user, owners, trx) => {
        if (owners.length === 1 && owners[0] === user.id) throw new AppError('conflict', 'The team needs at least one owner');
        await deleteUserSessions(trx, user.id);
        await recordAudit(trx, actor.teamId, actorOf(actor), 'member.removed', { user_id: user.id, email: user.email, role: user.role });
        return memberView((await deleteUser(trx, user.id))!);
      });
    },
  };
}
