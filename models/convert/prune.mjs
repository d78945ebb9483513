// Keeps only the named graph outputs and the nodes they need. IS-Net's export returns its six
// side outputs and six decoder features besides `output`; onnxruntime computes every graph
// output on every run (and cannot reuse their buffers), although the engine reads one.

/** Prunes a decoded ModelProto in place to `keep` (output names). */
export function pruneOutputs(model, keep) {
  const g = model.graph;
  const missing = keep.filter((k) => !g.output.some((o) => o.name === k));
  if (missing.length) throw new Error(`prune: no graph output named ${missing.join(', ')}`);
  g.output = g.output.filter((o) => keep.includes(o.name));
  const producer = new Map();
  for (const n of g.node) for (const o of n.output) producer.set(o, n);
  const needed = new Set();
  const stack = [...keep];
  while (stack.length) {
    const n = producer.get(stack.pop());
    if (!n || needed.has(n)) continue;
    needed.add(n);
    stack.push(...n.input);
  }
  g.node = g.node.filter((n) => needed.has(n));
  const used = new Set(g.node.flatMap((n) => n.input));
  g.initializer = g.initializer.filter((t) => used.has(t.name));
  g.valueInfo = g.valueInfo.filter((v) => used.has(v.name));
  return model;
}
