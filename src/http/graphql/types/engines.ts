import type { ModelEngines, OperationEngines } from '../../../domain/who-makes-what.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';

const services = servicesFor('engineStatus');

const ModelEnginesRef = builder.objectRef<ModelEngines>('ModelEngines').implement({
  description: 'A model whose requests have a route of their own',
  fields: (t) => ({
    model: t.exposeString('model'),
    engines: t.exposeStringList('engines', { description: 'The engines tried, in order' }),
    demo: t.exposeBoolean('demo', { description: 'The built-in demo renderer (not AI) draws these requests' }),
  }),
});

const OperationEnginesRef = builder.objectRef<OperationEngines>('OperationEngines').implement({
  description: 'Which engine makes an operation on this server',
  fields: (t) => ({
    operation: t.exposeString('operation', { description: 'The operation, as the create tabs and ENGINE_ROUTES name it (text-to-image, ai-video, ...)' }),
    kind: t.exposeString('kind', { description: 'image or video' }),
    engines: t.exposeStringList('engines', { description: "The engines tried, in order, for the requests whose model has no route of its own; `local` is the built-in demo renderer" }),
    demo: t.exposeBoolean('demo', { description: 'Some request of this operation is drawn by the built-in demo renderer: the prompt written on a gradient, not AI' }),
    demo_fallback: t.exposeBoolean('demo_fallback', { description: 'The demo renderer draws when every provider of a route before it refused the job' }),
    models: t.field({ type: [ModelEnginesRef], resolve: (o) => o.models }),
  }),
});

builder.queryFields((t) => ({
  engines: t.field({
    type: [OperationEnginesRef],
    description: 'Which engine makes each operation on this server, and whether it is the built-in demo renderer (the dashboard warns where it is)',
    resolve: (_r, _a, ctx) => {
      principalOf(ctx);
      return services(ctx).engineStatus.operations();
    },
  }),
}));
