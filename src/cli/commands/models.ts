import type { Command } from 'commander';
import { EXIT } from '../../errors.js';
import type { CliIO } from '../program.js';

function size(bytes: number | null): string {
  return bytes === null ? '-' : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `imgtool models` and `imgtool models verify`: what the local engine has and whether it is intact. */
export function registerModelsCommand(program: Command, io: CliIO): void {
  const cmd = program
    .command('models')
    .summary('List the local models and their status')
    .description('Lists the ONNX models assembled at install time (id, task, size, licence, status). Rebuild with: npm run models')
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }) => {
      const { listModels } = await import('../../engine/models.js');
      const models = listModels();
      if (flags.json) {
        io.stdout.write(JSON.stringify(models) + '\n');
        return;
      }
      io.stdout.write(`${'id'.padEnd(18)}${'task'.padEnd(9)}${'size'.padStart(9)}  ${'status'.padEnd(8)}licence\n`);
      for (const m of models) io.stdout.write(`${m.id.padEnd(21)}${m.task.padEnd(9)}${size(m.size).padStart(9)}  ${m.status.padEnd(8)}${m.licence}\n`);
      if (models.some((m) => m.status !== 'ok')) io.exitCode = EXIT.someFailed;
    });
  cmd
    .command('verify')
    .description('Re-hash every model file against the manifest (exit 1 on any mismatch)')
    .option('--json', 'print JSON')
    .action(async (_f: unknown, c: Command) => {
      const flags = c.optsWithGlobals<{ json?: boolean }>();
      const { verifyModels, REBUILD_COMMAND } = await import('../../engine/models.js');
      const results = verifyModels();
      if (flags.json) io.stdout.write(JSON.stringify(results) + '\n');
      else
        for (const r of results)
          io.stdout.write(
            `${r.status === 'ok' ? 'ok     ' : r.status.padEnd(7)} ${r.id}${r.status === 'ok' ? '' : `: expected sha256 ${r.expectedSha256}, got ${r.actualSha256 ?? 'no file'}`}\n`,
          );
      const bad = results.filter((r) => r.status !== 'ok');
      if (bad.length) {
        if (!flags.json) io.stderr.write(`${bad.length} model(s) missing or corrupt; rebuild with: ${REBUILD_COMMAND}\n`);
        io.exitCode = EXIT.someFailed;
      }
    });
}
