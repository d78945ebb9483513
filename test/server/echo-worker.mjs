// A stand-in pipeline thread for the pipeline runner's tests (pipelines.ts): a piscina task
// with pipeline-thread.ts's protocol that takes options.ms to "run" (or until cancelled) and
// answers with its own threadId, so tests can see which thread ran a job.
import { threadId } from 'node:worker_threads';

export async function nudge() {
  return { ok: 'nudge', threadId };
}

export default async function (task) {
  const { port } = task;
  port.postMessage({ type: 'started' });
  port.postMessage({ type: 'progress', fraction: 0.5, stage: 'echo' });
  const cancelled = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), task.options.ms ?? 0);
    port.on('message', (m) => {
      if (m.type === 'abort') {
        clearTimeout(timer);
        resolve(true);
      }
    });
  });
  port.close();
  if (cancelled) return { ok: false, threadId, code: 'job_cancelled', message: 'cancelled', status: 409 };
  return { ok: true, threadId, result: { ext: 'txt', contentType: 'text/plain', data: new TextEncoder().encode('ok'), credits: 1, meta: { threadId } } };
}
