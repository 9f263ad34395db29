import { exportTeamJob } from '../src/jobs/export-team.ts';
import { defineTask } from './define.ts';

/** An owner's export of their team, built into storage. */
export const exportTeamTask = defineTask(exportTeamJob, (ctx, { export_id }) => ctx.teamExports.run(export_id));
