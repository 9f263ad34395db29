// A V8 CPU profile (node:inspector's Profiler.stop) summed by where its self time went.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time by bucket: a package under node_modules, a file of ours, a Node internal, or V8's own (GC, idle, program). */
export function summarise(p: Profile): Array<[string, number]> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const url = n.callFrame.url;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    const bucket = !url ? `(${n.callFrame.functionName.replace(/[()]/g, '') || 'native'})` : pkg ? `package ${pkg}` : url.startsWith('node:') ? `node ${url.slice(5).split('/').slice(0, 2).join('/')}` : `ours ${url.replace(/^.*\/(src|bench)\//, '$1/')}`;
    self.set(bucket, (self.get(bucket) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  return [...self].sort((a, b) => b[1] - a[1]);
}
