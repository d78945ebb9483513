import { notAvailable, type Pipeline } from '../define.js';

// The local pipeline has not landed yet; this answers a clear error instead of a fake result.
export const run: Pipeline<any> = notAvailable('video-loop');
