import type { BucketRule } from '../../domain/rate-limit.ts';
import type { AppError } from '../../domain/errors.ts';
import type { Principal } from '../../services/principal.ts';
import type { DashboardPrincipal, SessionView } from '../../services/sessions.ts';

/** How a request or a WebSocket connection presents itself: an API key, or a dashboard session with its CSRF token. */
export interface Credentials {
  authorization?: string | undefined;
  cookie?: string | undefined;
  csrfToken?: string | undefined;
}

/** What the credentials authenticate to: the caller with its rate-limit bucket, or the error to answer. */
export type GraphQLAuth =
  | { principal: Principal; rate: BucketRule; bucket: string; session?: DashboardPrincipal & { view: SessionView } }
  | { error: AppError };
