import type { CaptionTemplateRow, StyleTemplateRow } from '../../../db/types.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';

const services = servicesFor('templates');

type Style = Omit<StyleTemplateRow, 'created_at'>;
type Caption = Omit<CaptionTemplateRow, 'created_at'>;

export const StyleTemplateRef = builder.objectRef<Style>('StyleTemplate').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    prompt: t.exposeString('prompt'),
    background: t.exposeString('background'),
    accent: t.exposeString('accent'),
  }),
});

export const CaptionTemplateRef = builder.objectRef<Caption>('CaptionTemplate').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description'),
    font_size: t.exposeInt('font_size'),
    color: t.exposeString('color'),
    highlight_color: t.exposeString('highlight_color'),
    position: t.exposeString('position'),
    uppercase: t.exposeBoolean('uppercase'),
  }),
});

const StylePage = pageOf<Style>('StyleTemplatePage', StyleTemplateRef);
const CaptionPage = pageOf<Caption>('CaptionTemplatePage', CaptionTemplateRef);

builder.queryFields((t) => ({
  styles: t.field({
    type: StylePage,
    args: pageArgs(t),
    resolve: (_r, args, ctx) => {
      principalOf(ctx);
      return services(ctx).templates.listStyles(pageQuery(args));
    },
  }),
  captionTemplates: t.field({
    type: CaptionPage,
    args: pageArgs(t),
    resolve: (_r, args, ctx) => {
      principalOf(ctx);
      return services(ctx).templates.listCaptionTemplates(pageQuery(args));
    },
  }),
}));
