import type { ScrapeRunner } from '../services/ad-library/runner.ts';
import type { CampaignRunner } from '../services/campaigns/runner.ts';
import type { GenerationDeleter } from '../services/generations/delete.ts';
import type { GenerationRunner } from '../services/generations/runner.ts';
import type { UpstreamCore } from '../services/generations/upstream.ts';
import type { MaintenanceService } from '../services/maintenance.ts';
import type { TeamExports } from '../services/team-exports.ts';
import type { RetentionService } from '../services/retention.ts';
import type { UploadService } from '../services/uploads.ts';
import type { WebhookService } from '../services/webhooks.ts';
import type { WorkerLiveness } from '../services/worker-liveness.ts';

/** What job handlers call: services and runners built once by the composition root (src/app.ts). */
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
