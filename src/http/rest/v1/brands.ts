import type { FastifyInstance } from 'fastify';
import type { BrandService } from '../../../services/brands.ts';

export function brandRoutes(scope: FastifyInstance, brands: BrandService): void {
  scope.get('/brands', (req) => brands.list(req.principal, req.query));
  scope.get<{ Params: { id: string } }>('/brands/:id', (req) => brands.get(req.principal, req.params.id));
}
