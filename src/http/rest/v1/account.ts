import type { FastifyInstance } from 'fastify';
import type { CreditService } from '../../../services/credits.ts';

export function accountRoutes(scope: FastifyInstance, credits: CreditService): void {
  scope.get('/account/credits', (req) => credits.balance(req.principal));
}
