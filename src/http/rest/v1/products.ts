import { productCreate, pageQuery } from '../../../domain/inputs.ts';
import type { Product } from '../../../services/products.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';
import { idParams, page, productCreated, productSchema } from './responses.ts';
import { routeUsing } from './route.ts';

const route = routeUsing('products');

// The spec's create response names the image field image_path.
const asCreated = ({ image_url, ...rest }: Product) => ({ ...rest, image_path: image_url });

const tag = 'Products';

export const productRoutes = [
  route({
    method: 'GET',
    path: '/products',
    operationId: 'listProducts',
    tag,
    summary: "List the team's products",
    query: pageQuery,
    responses: { 200: { description: 'A page of products, newest first', schema: page(productSchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.products.list(req.principal, req.query),
  }),
  route({
    method: 'GET',
    path: '/products/:id',
    operationId: 'getProduct',
    tag,
    summary: 'Fetch a product',
    params: idParams,
    responses: { 200: { description: 'The product', schema: productSchema } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.products.get(req.principal, req.params.id),
  }),
  route({
    method: 'POST',
    path: '/products',
    operationId: 'createProduct',
    tag,
    summary: 'Create a product',
    description: 'The image is downloaded and stored: a publicly accessible URL of a valid image, at most 10 MB.',
    body: productCreate,
    idempotent: true,
    responses: { 201: { description: 'The product; its image under the name `image_path`', schema: productCreated } },
    errors: ['validation_error', 'not_found', 'conflict'],
    handler: async (s, req, reply) => sendOutcome(reply, await s.products.create(req.principal, req.body, idempotencyOf(req)), asCreated),
  }),
  route({
    method: 'DELETE',
    path: '/products/:id',
    operationId: 'deleteProduct',
    tag,
    summary: 'Delete a product',
    params: idParams,
    responses: { 204: { description: 'Deleted' } },
    errors: ['validation_error', 'not_found', 'conflict'],
    handler: async (s, req, reply) => {
      await s.products.remove(req.principal, req.params.id);
      return reply.status(204).send();
    },
  }),
];
