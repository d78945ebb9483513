// int8PreferredFor decides between the int8 and fp32 IS-Net; IMGTOOL_INT8 must override it both ways.
import { describe, expect, it } from 'vitest';
import { int8PreferredFor, type CpuFacts } from '../../src/engine/cpu.js';

// Abridged flag lines of real CPUs' /proc/cpuinfo.
const SKYLAKE = 'flags\t\t: fpu vme de pse tsc msr pae mce cx8 sse sse2 ssse3 fma cx16 sse4_1 sse4_2 avx f16c avx2 avx512f avx512dq avx512cd avx512bw avx512vl';
const CASCADE_LAKE = `${SKYLAKE} avx512_vnni`;
const ALDER_LAKE = 'flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma avx_vnni';
const ZEN2 = 'flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma sha_ni';
// A flag that merely contains the text must not count.
const LOOKALIKE = 'flags\t\t: fpu sse avx2 xavx_vnnix';

const x64 = (cpuinfo: string | undefined, override?: string): CpuFacts => ({ arch: 'x64', platform: 'linux', override, cpuinfo: () => cpuinfo });

describe('int8PreferredFor', () => {
  it('on x86-64 Linux, says yes exactly when /proc/cpuinfo lists a VNNI flag', () => {
    expect(int8PreferredFor(x64(CASCADE_LAKE))).toBe(true);
    expect(int8PreferredFor(x64(ALDER_LAKE))).toBe(true);
    expect(int8PreferredFor(x64(SKYLAKE))).toBe(false);
    expect(int8PreferredFor(x64(ZEN2))).toBe(false);
    expect(int8PreferredFor(x64(LOOKALIKE))).toBe(false);
    expect(int8PreferredFor(x64(undefined))).toBe(false);
  });

  it('follows IMGTOOL_INT8 when set, both ways', () => {
    expect(int8PreferredFor(x64(SKYLAKE, '1'))).toBe(true);
    expect(int8PreferredFor(x64(CASCADE_LAKE, '0'))).toBe(false);
    expect(int8PreferredFor({ arch: 'arm64', platform: 'darwin', override: '0', cpuinfo: () => undefined })).toBe(false);
    // Anything else is no override.
    expect(int8PreferredFor(x64(CASCADE_LAKE, 'yes'))).toBe(true);
  });

  it('arm64 yes; other x86 platforms a conservative no, without reading cpuinfo', () => {
    const never = () => {
      throw new Error('cpuinfo read');
    };
    expect(int8PreferredFor({ arch: 'arm64', platform: 'linux', cpuinfo: never })).toBe(true);
    expect(int8PreferredFor({ arch: 'x64', platform: 'win32', cpuinfo: never })).toBe(false);
    expect(int8PreferredFor({ arch: 'x64', platform: 'darwin', cpuinfo: never })).toBe(false);
  });
});
