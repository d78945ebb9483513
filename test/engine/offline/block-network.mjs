// Preloaded (node --import) into the offline children: once armed, every way out of the
// process (TCP/IPC socket connects, DNS, fetch) throws and is recorded, so a model path
// that reaches for the network fails loudly instead of silently downloading.
// Plain node scripts are armed at once; under vite-node the script arms it itself after
// vite's own start-up (which resolves "localhost") is done.
import dns from 'node:dns';
import net from 'node:net';

const attempts = [];
globalThis.__networkAttempts = attempts;
function blocked(what) {
  return function () {
    attempts.push(what);
    throw new Error(`network disabled in this test (${what})`);
  };
}
globalThis.__armNetworkBlock = () => {
  net.Socket.prototype.connect = blocked('net.Socket.connect');
  dns.lookup = blocked('dns.lookup');
  dns.resolve = blocked('dns.resolve');
  dns.promises.lookup = blocked('dns.promises.lookup');
  globalThis.fetch = blocked('fetch');
};
if (process.env.IMGTOOL_ARM_NETWORK_BLOCK !== 'later') globalThis.__armNetworkBlock();
