import { deleteStoredFilesJob } from '../src/jobs/delete-stored-files.ts';
import { defineTask } from './define.ts';

/** The files of deleted generations (and of expired exports), deleted from storage. */
export const deleteStoredFilesTask = defineTask(deleteStoredFilesJob, (ctx, { keys }) => ctx.storedFiles.deleteFiles(keys));
