import { builder } from '../builder.ts';
import { ownerOf, servicesFor } from '../request-context.ts';
import type { TeamDeleted } from '../../../services/team-deletion.ts';
import type { TeamExportDownload, TeamExportView } from '../../../services/team-exports.ts';
import { errorTypes } from './errors.ts';
import { notFoundAsNull } from './visibility.ts';

const services = servicesFor('teamExports', 'teamDeleter');

// An owner's export of their team and its deletion (the dashboard's Settings). Sessions only.

const ExportStatusEnum = builder.enumType('TeamExportStatus', { values: ['processing', 'completed', 'failed'] as const });

const TeamExportRef = builder.objectRef<TeamExportView>('TeamExport').implement({
  description: 'An export of the whole team as one .tar.gz archive, made by a job; its download link is handed out once',
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.field({ type: ExportStatusEnum, resolve: (e) => e.status }),
    size: t.float({ nullable: true, description: 'Bytes of the archive, once made', resolve: (e) => e.size }),
    error: t.exposeString('error', { nullable: true }),
    created_at: t.expose('created_at', { type: 'DateTime' }),
    completed_at: t.expose('completed_at', { type: 'DateTime', nullable: true }),
    downloaded_at: t.expose('downloaded_at', { type: 'DateTime', nullable: true, description: 'When its one download link was handed out' }),
    available_until: t.expose('available_until', { type: 'DateTime', nullable: true, description: 'Until when its link can be asked for; the archive is deleted after' }),
  }),
});

const TeamExportDownloadRef = builder.objectRef<TeamExportDownload>('TeamExportDownload').implement({
  description: 'A signed link to the archive, valid until expires_at; asked for once per export',
  fields: (t) => ({
    url: t.exposeString('url'),
    expires_at: t.expose('expires_at', { type: 'DateTime' }),
  }),
});

const TeamDeletionRef = builder.objectRef<TeamDeleted>('TeamDeletion').implement({
  description: "What deleting the team did. The team's id, its ledger lines, top-ups, generation tombstones and audit log stay for the operator's accounts",
  fields: (t) => ({
    team_id: t.exposeID('team_id'),
    deleted_at: t.expose('deleted_at', { type: 'DateTime' }),
    generations_cancelled: t.exposeInt('generations_cancelled', { description: 'Processing generations cancelled (and refunded) first' }),
    generations_deleted: t.exposeInt('generations_deleted'),
    keys_revoked: t.exposeInt('keys_revoked'),
    sessions_ended: t.exposeInt('sessions_ended'),
    files_deleted: t.exposeInt('files_deleted'),
    kept: t.exposeStringList('kept', { description: 'The tables that keep rows of the team' }),
  }),
});

builder.queryFields((t) => ({
  teamExports: t.field({
    type: [TeamExportRef],
    description: "The team's last 20 exports, newest first (owners)",
    resolve: (_r, _a, ctx) => services(ctx).teamExports.list(ownerOf(ctx)),
  }),
  teamExport: t.field({
    type: TeamExportRef,
    nullable: true,
    description: 'One export (owners); null when it is not this team\'s',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => notFoundAsNull(() => services(ctx).teamExports.get(ownerOf(ctx), String(args.id))),
  }),
}));

builder.mutationFields((t) => ({
  startTeamExport: t.field({
    type: TeamExportRef,
    errors: errorTypes,
    description: 'Starts an export of everything of the team (owners); one at a time. Follow it with teamExport, then downloadTeamExport',
    resolve: (_r, _a, ctx) => services(ctx).teamExports.start(ownerOf(ctx)),
  }),
  downloadTeamExport: t.field({
    type: TeamExportDownloadRef,
    errors: errorTypes,
    description: 'The completed archive\'s signed link (15 minutes), handed out once: a second call is a conflict; the archive is deleted once the link expires',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => services(ctx).teamExports.download(ownerOf(ctx), String(args.id)),
  }),
  deleteTeam: t.field({
    type: TeamDeletionRef,
    errors: errorTypes,
    description:
      "Deletes the team for good (owners): every key and session ends at once, processing generations are cancelled, every row and file is deleted. confirm_name must be the team's name, typed exactly",
    args: { confirm_name: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => services(ctx).teamDeleter.removeAsOwner(ownerOf(ctx), args.confirm_name),
  }),
}));
