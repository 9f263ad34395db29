import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

/**
 * OpenTelemetry traces, exported over OTLP/HTTP (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT is set:
 * one trace from the HTTP request through its job, the engine or the provider's API, storage and
 * the webhook, the generation id an attribute of each span that knows it. The job carries its
 * parent as a W3C `traceparent` in its payload, so the trace crosses processes with it.
 * Without an endpoint nothing is started and every helper here runs its work with the API's no-op
 * tracer (no context manager, no allocation beyond a closure).
 */
export interface TracingConfig {
  /** The full URL spans are POSTed to (…/v1/traces); undefined turns tracing off. */
  tracesUrl: string | undefined;
  serviceName: string;
  /** How long spans wait in the batch before they are sent (OTEL_BSP_SCHEDULE_DELAY). */
  scheduleDelayMs: number;
}

export interface Tracing {
  enabled: boolean;
  /** Sends what is batched (at a close, so a short run's spans are not lost). */
  flush: () => Promise<void>;
}

const OFF: Tracing = { enabled: false, flush: async () => {} };
let started: Promise<Tracing> | undefined;

/** Starts the process's tracer provider once (the SDK is imported only then); later calls share it. */
export function startTracing(cfg: TracingConfig): Promise<Tracing> {
  if (!cfg.tracesUrl) return Promise.resolve(started ? started : OFF);
  return (started ??= (async () => {
    const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }] = await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
    ]);
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': cfg.serviceName }),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: cfg.tracesUrl }), scheduledDelayMillis: cfg.scheduleDelayMs })],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    return { enabled: true, flush: () => provider.forceFlush() };
  })());
}

const tracer = () => trace.getTracer('adforge');

/**
 * Runs `work` inside a new span, a child of the active one (or of `parent`); a thrown error is
 * recorded on it and rethrown.
 */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>, opts: { kind?: SpanKind; parent?: Context } = {}): Promise<T> {
  const parent = opts.parent ?? context.active();
  return tracer().startActiveSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes }, parent, async (span) => {
    try {
      return await work(span);
    } catch (e) {
      span.recordException(e as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
      throw e;
    } finally {
      span.end();
    }
  });
}

/** Adds attributes to the active span, if any (the generation id once a create has chosen it). */
export function annotate(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active span as a W3C traceparent, for a job queued now; undefined when nothing is traced. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a job's `traceparent` names: its spans continue the trace that queued it. */
export function contextOf(traceparent: unknown): Context {
  return typeof traceparent === 'string' ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

export { SpanKind, SpanStatusCode, context, trace };
