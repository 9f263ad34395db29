import type { TaskList } from 'graphile-worker';
import type { App } from '../src/app.ts';

/** graphile-worker tasks, one file each; each checks its payload and calls a service. */
export function buildTaskList(_app: App): TaskList {
  return {};
}
