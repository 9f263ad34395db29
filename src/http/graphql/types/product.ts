import type { Product } from '../../../services/products.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { errorTypes } from './errors.ts';
import { idempotencyFor, unwrapOutcome } from './idempotency.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';
import { notFoundAsNull } from './visibility.ts';

const services = servicesFor('products');

export const ProductRef = builder.objectRef<Product>('Product').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    category: t.exposeString('category'),
    image_url: t.exposeString('image_url', { description: 'Signed link to our copy of the image, valid 1 hour' }),
    price: t.exposeFloat('price', { nullable: true }),
    currency: t.exposeString('currency'),
    link: t.exposeString('link', { nullable: true }),
    created_at: t.field({ type: 'DateTime', resolve: (p) => p.created_at }),
  }),
});

const ProductPage = pageOf<Product>('ProductPage', ProductRef);

const ProductInput = builder.inputType('ProductInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    description: t.string({ required: true }),
    category: t.string({ required: true }),
    image_url: t.string({ required: true }),
    price: t.float(),
    currency: t.string(),
    link: t.string(),
  }),
});

const Deleted = builder.objectRef<{ id: string }>('Deleted').implement({ fields: (t) => ({ id: t.exposeID('id') }) });

builder.queryFields((t) => ({
  products: t.field({
    type: ProductPage,
    args: pageArgs(t),
    resolve: (_r, args, ctx) => services(ctx).products.list(principalOf(ctx), pageQuery(args)),
  }),
  product: t.field({
    type: ProductRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => notFoundAsNull(() => services(ctx).products.get(principalOf(ctx), String(id))),
  }),
}));

builder.mutationFields((t) => ({
  createProduct: t.field({
    type: ProductRef,
    errors: errorTypes,
    args: { input: t.arg({ type: ProductInput, required: true }), idempotencyKey: t.arg.string() },
    resolve: async (_r, { input, idempotencyKey }, ctx) =>
      unwrapOutcome<Product>(await services(ctx).products.create(principalOf(ctx), input, idempotencyFor('createProduct', idempotencyKey))),
  }),
  deleteProduct: t.field({
    type: Deleted,
    errors: errorTypes,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_r, { id }, ctx) => {
      await services(ctx).products.remove(principalOf(ctx), String(id));
      return { id: String(id) };
    },
  }),
}));

export { Deleted };
