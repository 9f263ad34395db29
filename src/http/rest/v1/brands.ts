import { pageQuery } from '../../../domain/inputs.ts';
import { brandSchema, idParams, page } from './responses.ts';
import { routeUsing } from './route.ts';

const route = routeUsing('brands');

const tag = 'Brands';

export const brandRoutes = [
  route({
    method: 'GET',
    path: '/brands',
    operationId: 'listBrands',
    tag,
    summary: "List the team's brands",
    query: pageQuery,
    responses: { 200: { description: 'A page of brands', schema: page(brandSchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.brands.list(req.principal, req.query),
  }),
  route({
    method: 'GET',
    path: '/brands/:id',
    operationId: 'getBrand',
    tag,
    summary: 'Fetch a brand',
    params: idParams,
    responses: { 200: { description: 'The brand', schema: brandSchema } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.brands.get(req.principal, req.params.id),
  }),
];
