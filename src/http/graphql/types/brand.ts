import type { Brand } from '../../../services/brands.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { Deleted } from './product.ts';
import { errorTypes } from './errors.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';
import { notFoundAsNull } from './visibility.ts';

const services = servicesFor('brands');

const optionalText = ['website_url', 'brand_voice', 'target_audience', 'brand_color_primary', 'brand_color_accent', 'logo_url', 'reference_image_url'] as const;

export const BrandRef = builder.objectRef<Brand>('Brand').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    industry: t.exposeString('industry'),
    ...Object.fromEntries(optionalText.map((k) => [k, t.exposeString(k, { nullable: true })])),
    created_at: t.field({ type: 'DateTime', resolve: (b) => b.created_at }),
  }),
});

const BrandPage = pageOf<Brand>('BrandPage', BrandRef);

const brandFields = (required: boolean) => (t: any) => ({
  name: t.string({ required }),
  description: t.string(),
  industry: t.string(),
  ...Object.fromEntries(optionalText.map((k) => [k, t.string()])),
});
const BrandInput = builder.inputType('BrandInput', { fields: brandFields(true) });
const BrandUpdateInput = builder.inputType('BrandUpdateInput', { fields: brandFields(false) });

builder.queryFields((t) => ({
  brands: t.field({
    type: BrandPage,
    args: pageArgs(t),
    resolve: (_r, args, ctx) => services(ctx).brands.list(principalOf(ctx), pageQuery(args)),
  }),
  brand: t.field({
    type: BrandRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => notFoundAsNull(() => services(ctx).brands.get(principalOf(ctx), String(id))),
  }),
}));

// The REST API only reads brands; a dashboard creates and edits them here.
builder.mutationFields((t) => ({
  createBrand: t.field({
    type: BrandRef,
    errors: errorTypes,
    args: { input: t.arg({ type: BrandInput, required: true }) },
    resolve: (_r, { input }, ctx) => services(ctx).brands.create(principalOf(ctx).teamId, input),
  }),
  updateBrand: t.field({
    type: BrandRef,
    errors: errorTypes,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: BrandUpdateInput, required: true }) },
    resolve: (_r, { id, input }, ctx) => services(ctx).brands.update(principalOf(ctx), String(id), input),
  }),
  deleteBrand: t.field({
    type: Deleted,
    errors: errorTypes,
    description: 'conflict while a generation being made uses it',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_r, { id }, ctx) => {
      await services(ctx).brands.remove(principalOf(ctx), String(id));
      return { id: String(id) };
    },
  }),
}));
