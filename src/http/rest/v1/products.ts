import type { FastifyInstance } from 'fastify';
import type { ProductService } from '../../../services/products.ts';

export function productRoutes(scope: FastifyInstance, products: ProductService): void {
  scope.get('/products', (req) => products.list(req.principal, req.query));
  scope.get<{ Params: { id: string } }>('/products/:id', (req) => products.get(req.principal, req.params.id));
  scope.post('/products', async (req, reply) => {
    const { image_url, ...rest } = await products.create(req.principal, req.body);
    // The spec's create response names the image field image_path.
    return reply.status(201).send({ ...rest, image_path: image_url });
  });
  scope.delete<{ Params: { id: string } }>('/products/:id', async (req, reply) => {
    await products.remove(req.principal, req.params.id);
    return reply.status(204).send();
  });
}
