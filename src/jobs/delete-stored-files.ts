import { z } from 'zod';
import { defineJob } from './define.ts';

/** The most keys one job carries: a bulk delete queues one job per batch of generations. */
export const MAX_KEYS_PER_JOB = 2000;

/**
 * The files of deleted generations, queued in the transaction that deletes their rows and run a
 * few minutes later: the request deletes them at once after its commit, and this job deletes
 * whatever that missed (a storage error, a process that died after the commit). Deleting a
 * missing key is not an error, so it is safe to run again; an error throws and is retried.
 */
export const deleteStoredFilesJob = defineJob({
  name: 'delete_stored_files',
  payload: z.object({ keys: z.array(z.string().min(1).max(1024)).min(1).max(MAX_KEYS_PER_JOB) }),
  options: { maxAttempts: 20 },
});
