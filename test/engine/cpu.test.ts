// int8Preferred decides between the int8 and fp32 IS-Net; IMGTOOL_INT8 must override it both ways.
import { afterEach, describe, expect, it, vi } from 'vitest';

describe('int8Preferred', () => {
  const saved = process.env.IMGTOOL_INT8;
  afterEach(() => {
    if (saved === undefined) delete process.env.IMGTOOL_INT8;
    else process.env.IMGTOOL_INT8 = saved;
    vi.resetModules();
  });

  it('follows IMGTOOL_INT8 when set', async () => {
    for (const [value, expected] of [['0', false], ['1', true]] as const) {
      process.env.IMGTOOL_INT8 = value;
      vi.resetModules();
      const { int8Preferred } = await import('../../src/engine/cpu.js');
      expect(int8Preferred()).toBe(expected);
    }
  });

  it('on x86-64 Linux, says yes exactly when /proc/cpuinfo lists VNNI', async () => {
    delete process.env.IMGTOOL_INT8;
    vi.resetModules();
    const { int8Preferred } = await import('../../src/engine/cpu.js');
    if (process.platform !== 'linux' || process.arch !== 'x64') return;
    const { readFileSync } = await import('node:fs');
    expect(int8Preferred()).toBe(/\b(avx512_vnni|avx_vnni)\b/.test(readFileSync('/proc/cpuinfo', 'utf8')));
  });
});
