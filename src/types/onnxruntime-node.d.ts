// onnxruntime-node 1.16.3 ships its JavaScript without its .d.ts files. Its API is onnxruntime-common's,
// re-exported as is (its lib/index.ts is `export * from 'onnxruntime-common'` plus registering the
// CPU backend), so the types come from the same onnxruntime-common version, a devDependency.
// Why 1.16.3: it is the last onnxruntime-node without an install script; from 1.17 on, the
// postinstall fetches a CUDA provider from outside the npm registry on linux-x64 (docs/models.md).
declare module 'onnxruntime-node' {
  export * from 'onnxruntime-common';
}
