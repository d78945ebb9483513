// A stand-in pipeline thread for ThreadRunner tests: speaks worker.ts's protocol, takes
// options.ms to "run", and answers with its own threadId so tests can see which thread ran a job.
import { parentPort, threadId } from 'node:worker_threads';

parentPort.on('message', (msg) => {
  if (msg.type !== 'run') return;
  setTimeout(() => {
    parentPort.postMessage({
      type: 'done',
      id: msg.id,
      result: { ext: 'txt', contentType: 'text/plain', data: new TextEncoder().encode('ok'), credits: 1, meta: { threadId } },
    });
  }, msg.options.ms ?? 0);
});
