import { contractSuite, localTarget } from './contract-suite.js';

/** The server contract suite (contract-suite.ts) against a server in this process. */
contractSuite(localTarget, { local: true });
