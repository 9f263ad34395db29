import type { ScrapeRunner } from '../src/services/ad-library/scrape-runner.ts';
import type { CampaignRunner } from '../src/services/campaigns/campaign-runner.ts';
import type { GenerationDeleter } from '../src/services/generations/delete.ts';
import type { GenerationRunner } from '../src/services/generations/generation-runner.ts';
import type { UpstreamCore } from '../src/services/generations/engine-jobs.ts';
import type { MaintenanceService } from '../src/services/maintenance.ts';
import type { TeamExports } from '../src/services/team-exports.ts';
import type { RetentionService } from '../src/services/retention.ts';
import type { UploadService } from '../src/services/uploads.ts';
import type { WebhookService } from '../src/services/webhooks.ts';
import type { WorkerLiveness } from '../src/services/worker-liveness.ts';

/** What job handlers call: services and runners built once by the composition root (src/app.ts); the task list (tasks/index.ts) hands it to every task. */
export interface JobContext {
  generationRunner: Pick<GenerationRunner, 'run'>;
  scrapeRunner: Pick<ScrapeRunner, 'run'>;
  campaignRunner: Pick<CampaignRunner, 'run'>;
  webhooks: Pick<WebhookService, 'deliverFor'>;
  maintenance: MaintenanceService;
  upstream: Pick<UpstreamCore, 'poll'>;
  workerLiveness: Pick<WorkerLiveness, 'releasedByShutdown' | 'afterOutage'>;
  teamExports: Pick<TeamExports, 'run'>;
  storedFiles: Pick<GenerationDeleter, 'deleteFiles'>;
  uploads: Pick<UploadService, 'deleteExpired'>;
  retention: Pick<RetentionService, 'run'>;
}
