import type { FastifyInstance } from 'fastify';
import type { App } from '../../../app.ts';
import { accountRoutes } from './account.ts';
import { adLibraryRoutes } from './ad-library.ts';
import { requireApiKey } from './auth-hook.ts';
import { avatarRoutes } from './avatars.ts';
import { brandRoutes } from './brands.ts';
import { generationRoutes } from './generations.ts';
import { productRoutes } from './products.ts';
import { quoteRoutes } from './quotes.ts';
import { uploadRoutes } from './uploads.ts';
import { mount, type Route } from './route.ts';
import { voiceRoutes } from './voices.ts';
import { webhookRoutes } from './webhooks.ts';

/** Every route of /api/v1, in the order the document lists them. */
export const REST_V1_ROUTES: readonly Route[] = [
  ...generationRoutes,
  ...voiceRoutes,
  ...productRoutes,
  ...brandRoutes,
  ...avatarRoutes,
  ...accountRoutes,
  ...adLibraryRoutes,
  ...quoteRoutes,
  ...webhookRoutes,
  ...uploadRoutes,
];

/** The spec's /api/v1 contract: routes only translate HTTP to service calls. */
export function registerRestV1(app: App) {
  return async function restV1(scope: FastifyInstance): Promise<void> {
    requireApiKey(scope, app.services.auth, app.services.rateLimiter);
    mount(scope, app.services, REST_V1_ROUTES);
  };
}
