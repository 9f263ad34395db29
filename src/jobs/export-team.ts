import { z } from 'zod';
import { defineJob } from './define.ts';

/** An owner's export of their team, built into storage (src/services/team-exports.ts); a failure is recorded on the export, not retried. */
export const exportTeamJob = defineJob({
  name: 'export_team',
  payload: z.object({ export_id: z.uuid() }),
  options: { maxAttempts: 1 },
});
