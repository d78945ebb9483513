import type { Command } from 'commander';
import { ImgtoolError } from '../../errors.js';
import { Ledger } from '../../credits/ledger.js';
import { imgtoolHome, loadUserConfig } from '../../config.js';
import type { CliIO } from '../program.js';

function credits(v: string, what: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new ImgtoolError('invalid_parameter', `${what} must be a whole number of credits >= 0, got ${JSON.stringify(v)}`);
  return n;
}

/** `imgtool credits`: the local credits file, or the remote balance with --remote. */
export function registerCreditsCommand(program: Command, io: CliIO): void {
  const printBalance = (balance: number, json?: boolean) =>
    io.stdout.write(json ? JSON.stringify({ credits_remaining: balance }) + '\n' : `${balance} credits remaining\n`);
  const cmd = program
    .command('credits')
    .summary('Show or change the credit balance')
    .description(
      `Shows the credit balance. Locally the balance lives in ${imgtoolHome(io.env)}/credits.json (history in credits-history.jsonl); with --remote it is the server's GET /v1/credits.`,
    )
    .option('--json', 'print JSON')
    .option('--remote <url>', 'read the balance of a v1 API server (env IMGTOOL_API_URL)')
    .option('--api-key <key>', 'API key for --remote (env IMGTOOL_API_KEY)')
    .option('--bearer-token <jwt>', 'OAuth 2.0 bearer token for --remote (env IMGTOOL_BEARER_TOKEN)')
    .action(async (flags: { json?: boolean; remote?: string; apiKey?: string; bearerToken?: string }) => {
      const remote = flags.remote ?? io.env.IMGTOOL_API_URL ?? loadUserConfig(io.env).remote;
      let balance: number;
      if (remote) {
        const { ApiClient } = await import('../../client/api.js');
        const client = new ApiClient({
          baseUrl: remote,
          apiKey: flags.apiKey ?? io.env.IMGTOOL_API_KEY,
          bearerToken: flags.bearerToken ?? io.env.IMGTOOL_BEARER_TOKEN,
        });
        balance = await client.credits(io.signal);
      } else balance = new Ledger(imgtoolHome(io.env)).balance();
      printBalance(balance, flags.json);
    });

  // `credits add N` and `credits set N` differ only in the ledger call.
  const change = (name: string, description: string, apply: (ledger: Ledger, n: number) => Promise<number>) =>
    cmd
      .command(`${name} <n>`)
      .description(description)
      .option('--json', 'print JSON')
      .action(async (n: string, _f: unknown, c: Command) => {
        const after = await apply(new Ledger(imgtoolHome(io.env)), credits(n, 'N'));
        printBalance(after, c.optsWithGlobals<{ json?: boolean }>().json);
      });
  change('add', 'Add N credits to the local balance', (l, n) => l.add(n));
  change('set', 'Set the local balance to N credits', (l, n) => l.set(n));
  cmd
    .command('history')
    .description('List local charges and changes, oldest first')
    .option('--json', 'print one JSON object per entry')
    .option('--limit <n>', 'only the last N entries')
    .action((_f: unknown, c: Command) => {
      const flags = c.optsWithGlobals<{ json?: boolean; limit?: string }>();
      let entries = new Ledger(imgtoolHome(io.env)).history();
      if (flags.limit) entries = entries.slice(-credits(flags.limit, '--limit'));
      for (const e of entries) {
        io.stdout.write(
          flags.json
            ? JSON.stringify(e) + '\n'
            : `${e.time}  ${e.kind.padEnd(6)} ${String(e.kind === 'charge' ? -e.credits : e.credits).padStart(6)}  balance ${String(e.balance).padStart(6)}  ${e.operation ?? ''} ${e.input ?? ''}\n`.replace(
                / +\n$/,
                '\n',
              ),
        );
      }
    });
}
