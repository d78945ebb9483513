import { readFileSync } from 'node:fs';
import os from 'node:os';

let cached: boolean | undefined;

/**
 * Whether int8 models (QLinearConv, u8 x s8) are worth running on this CPU. onnxruntime's
 * x86 int8 kernels are fast with VNNI (AVX-512 VNNI, AVX-VNNI); on older x86 its u8s8 path
 * can saturate in the AVX2 multiply-add, per onnxruntime's quantization notes, so the fp32 graph
 * is the safe choice there. arm64 has its own int8 dot products. Only Linux exposes the flags
 * cheaply (/proc/cpuinfo); elsewhere on x86 the answer is a conservative no.
 */
export function int8Preferred(): boolean {
  if (cached !== undefined) return cached;
  if (process.env.IMGTOOL_INT8 === '0' || process.env.IMGTOOL_INT8 === '1') return (cached = process.env.IMGTOOL_INT8 === '1');
  if (os.arch() === 'arm64') return (cached = true);
  if (os.arch() !== 'x64' || os.platform() !== 'linux') return (cached = false);
  try {
    return (cached = /\b(avx512_vnni|avx_vnni)\b/.test(readFileSync('/proc/cpuinfo', 'utf8')));
  } catch {
    return (cached = false);
  }
}
