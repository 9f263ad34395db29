import type { FastifyInstance } from 'fastify';
import type { App } from '../../../app.ts';
import { accountRoutes } from './account.ts';
import { requireApiKey } from './auth-hook.ts';
import { avatarRoutes } from './avatars.ts';
import { brandRoutes } from './brands.ts';
import { generationRoutes } from './generations.ts';
import { productRoutes } from './products.ts';
import { voiceRoutes } from './voices.ts';
import { adLibraryRoutes } from './ad-library.ts';

/** The spec's /api/v1 contract: routes only translate HTTP to service calls. */
export function registerRestV1(app: App) {
  return async function restV1(scope: FastifyInstance): Promise<void> {
    requireApiKey(scope, app.services.auth);
    productRoutes(scope, app.services.products);
    brandRoutes(scope, app.services.brands);
    avatarRoutes(scope, app.services.avatars);
    accountRoutes(scope, app.services.credits);
    generationRoutes(scope, {
      creator: app.services.generationCreator,
      reader: app.services.generationReader,
      templates: app.services.templates,
    });
    voiceRoutes(scope, { voices: app.services.voices, voiceovers: app.services.voiceovers });
    adLibraryRoutes(scope, { reader: app.services.adLibrary, scraper: app.services.adLibraryScraper });
  };
}
