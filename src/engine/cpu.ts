import { readFileSync } from 'node:fs';
import os from 'node:os';

/** What the int8 decision depends on; `int8Preferred` reads it from this machine. */
export interface CpuFacts {
  arch: string;
  platform: string;
  /** The IMGTOOL_INT8 override, if set. */
  override?: string;
  /** /proc/cpuinfo's text, read only when the decision needs it (x86-64 Linux). */
  cpuinfo: () => string | undefined;
}

/**
 * Whether int8 models (QLinearConv, u8 x s8) are worth running on this CPU. onnxruntime's
 * x86 int8 kernels are fast with VNNI (AVX-512 VNNI, AVX-VNNI); on older x86 its u8s8 path
 * can saturate in the AVX2 multiply-add, per onnxruntime's quantization notes, so the fp32 graph
 * is the safe choice there. arm64 has its own int8 dot products. Only Linux exposes the flags
 * cheaply (/proc/cpuinfo); elsewhere on x86 the answer is a conservative no.
 */
export function int8PreferredFor(facts: CpuFacts): boolean {
  if (facts.override === '0' || facts.override === '1') return facts.override === '1';
  if (facts.arch === 'arm64') return true;
  if (facts.arch !== 'x64' || facts.platform !== 'linux') return false;
  const flags = facts.cpuinfo();
  return flags !== undefined && /\b(avx512_vnni|avx_vnni)\b/.test(flags);
}

let cached: boolean | undefined;

/** `int8PreferredFor` on this machine, decided once per process. */
export function int8Preferred(): boolean {
  cached ??= int8PreferredFor({
    arch: os.arch(),
    platform: os.platform(),
    override: process.env.IMGTOOL_INT8,
    cpuinfo: () => {
      try {
        return readFileSync('/proc/cpuinfo', 'utf8');
      } catch {
        return undefined;
      }
    },
  });
  return cached;
}
