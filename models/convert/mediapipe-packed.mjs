// MediaPipe's web solutions pack their extra model files into one `*_packed_assets.data` blob
// for Emscripten's file system; the matching `*_packed_assets_loader.js` calls
// loadPackage({"files": [{"filename", "start", "end"}, ...]}) with each file's byte range.
// @mediapipe/pose keeps its person detector (pose_detection.tflite) only there.

/** The file list from a packed-assets loader script. */
export function packedFiles(loaderText) {
  const m = /loadPackage\((\{"files":.*?\})\)/s.exec(loaderText);
  if (!m) throw new Error('packed-assets loader: no loadPackage({"files": ...}) call found');
  return JSON.parse(m[1]).files;
}

/** Bytes of `filename` (its full packed path, or just its base name) from the packed data. */
export function extractPacked(data, loaderText, filename) {
  const files = packedFiles(loaderText);
  const f = files.find((e) => e.filename === filename || e.filename.endsWith(`/${filename}`));
  if (!f) throw new Error(`packed assets hold no ${filename} (they hold ${files.map((e) => e.filename).join(', ')})`);
  if (f.end > data.length) throw new Error(`packed assets are truncated: ${filename} ends at ${f.end}, data has ${data.length} bytes`);
  return data.subarray(f.start, f.end);
}
