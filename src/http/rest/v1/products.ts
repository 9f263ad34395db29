import type { FastifyInstance } from 'fastify';
import type { Product, ProductService } from '../../../services/products.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';

// The spec's create response names the image field image_path.
const asCreated = ({ image_url, ...rest }: Product) => ({ ...rest, image_path: image_url });

export function productRoutes(scope: FastifyInstance, products: ProductService): void {
  scope.get('/products', (req) => products.list(req.principal, req.query));
  scope.get<{ Params: { id: string } }>('/products/:id', (req) => products.get(req.principal, req.params.id));
  scope.post('/products', async (req, reply) =>
    sendOutcome(reply, await products.create(req.principal, req.body, idempotencyOf(req)), asCreated),
  );
  scope.delete<{ Params: { id: string } }>('/products/:id', async (req, reply) => {
    await products.remove(req.principal, req.params.id);
    return reply.status(204).send();
  });
}
