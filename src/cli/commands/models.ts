import type { Command } from 'commander';
import { EXIT } from '../../errors.js';
import type { CliIO } from '../program.js';

function size(bytes: number | null): string {
  return bytes === null ? '-' : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * `imgtool models`, `models verify`, `models build` and `models path`: what the local engine has,
 * whether it is intact, assembling it ahead of first use (Dockerfiles, CI images), and where.
 */
export function registerModelsCommand(program: Command, io: CliIO): void {
  const cmd = program
    .command('models')
    .summary('List the local models and their status')
    .description(
      'Lists the ONNX models (id, task, size, licence of the weights and of the npm package they come from, status). A missing model is assembled on first use into the folder `imgtool models path` prints; `imgtool models build` assembles them all ahead of time',
    )
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }) => {
      const { listModels } = await import('../../engine/models.js');
      const models = listModels();
      if (flags.json) {
        io.stdout.write(JSON.stringify(models) + '\n');
        return;
      }
      io.stdout.write(`${'id'.padEnd(21)}${'task'.padEnd(9)}${'size'.padStart(9)}  ${'status'.padEnd(8)}licence\n`);
      for (const m of models) io.stdout.write(`${m.id.padEnd(21)}${m.task.padEnd(9)}${size(m.size).padStart(9)}  ${m.status.padEnd(8)}${m.licence}\n`);
      if (models.some((m) => m.status === 'corrupt')) io.exitCode = EXIT.someFailed;
    });
  cmd
    .command('verify')
    .description(
      'Re-hash every model file against the manifest (exit 1 on a corrupt file; a missing one is listed and assembled on first use, or by `imgtool models build`)',
    )
    .option('--json', 'print JSON')
    .action(async (_f: unknown, c: Command) => {
      const flags = c.optsWithGlobals<{ json?: boolean }>();
      const { verifyModels, REBUILD_COMMAND } = await import('../../engine/models.js');
      const results = verifyModels();
      if (flags.json) io.stdout.write(JSON.stringify(results) + '\n');
      else
        for (const r of results)
          io.stdout.write(
            r.status === 'ok'
              ? `ok      ${r.id}\n`
              : r.status === 'missing'
                ? `missing ${r.id} (assembled on first use)\n`
                : `corrupt ${r.id}: expected sha256 ${r.expectedSha256}, got ${r.actualSha256}\n`,
          );
      const bad = results.filter((r) => r.status === 'corrupt');
      if (bad.length) {
        if (!flags.json) io.stderr.write(`${bad.length} model(s) corrupt; rebuild with: ${REBUILD_COMMAND} --force\n`);
        io.exitCode = EXIT.someFailed;
      }
    });
  cmd
    .command('build')
    .description('Assemble every model (or --only ids) from the installed npm packages into the models folder, and verify them (for Dockerfiles and CI images)')
    .option('--force', 'rebuild even intact models')
    .option('--only <ids>', 'comma-separated model ids')
    .option('--json', 'print JSON')
    .action(async (_f: unknown, c: Command) => {
      const flags = c.optsWithGlobals<{ json?: boolean; force?: boolean; only?: string }>();
      const { modelsDir, modelBuilder } = await import('../../engine/models.js');
      const dir = modelsDir();
      const t0 = Date.now();
      const log = (line: string) => {
        if (!flags.json) io.stdout.write(`${line}\n`);
      };
      const only = flags.only ? new Set(flags.only.split(',').map((s) => s.trim())) : null;
      const { built, failures } = await (await modelBuilder()).buildModels({ dir, only, force: flags.force === true, log });
      if (flags.json) io.stdout.write(JSON.stringify({ dir, built, failures, ms: Date.now() - t0 }) + '\n');
      else if (!failures.length) io.stdout.write(`models: all present and verified in ${dir} (${Date.now() - t0} ms)\n`);
      if (failures.length) {
        if (!flags.json) io.stderr.write(`${failures.length} model(s) failed to build:\n  ${failures.join('\n  ')}\n`);
        io.exitCode = EXIT.someFailed;
      }
    });
  cmd
    .command('path')
    .description('Print the folder the models are read from and assembled into (IMGTOOL_MODELS_DIR, else $XDG_CACHE_HOME/imgtool/models)')
    .action(async () => {
      const { modelsDir } = await import('../../engine/models.js');
      io.stdout.write(`${modelsDir()}\n`);
    });
}
