import { describe, expect, test } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../src/errors.js';
import { DEFAULT_JOB_ERROR } from '../../src/ops/define.js';
import { BUILT_IN_OPERATIONS } from '../../src/ops/registry.js';
import { tryOn } from '../../src/ops/try-on/index.js';

/** A failed job's error object, per operation: what the server sends always fits what the OpenAPI document publishes. */
describe('job error shapes', () => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];

  test.each(BUILT_IN_OPERATIONS.filter((op) => op.jobPath).map((op) => [op.name, op] as const))(
    '%s: every imgtool code formats into its published schema',
    (_name, op) => {
      const shape = op.jobError ?? DEFAULT_JOB_ERROR;
      for (const code of codes) expect(shape.schema.safeParse(shape.format(code, 'why')).success, code).toBe(true);
    },
  );

  test("try-on keeps the spec's closed enum: input problems are invalid_parameter, internal ones unexpected_error", () => {
    const format = tryOn.jobError!.format;
    expect(format('job_cancelled', 'm')).toEqual({ message: 'm', error_code: 'job_cancelled' });
    expect(format('image_too_small', 'm')).toEqual({ message: 'm', error_code: 'invalid_parameter' });
    expect(format('internal_error', 'm')).toEqual({ message: 'm', error_code: 'unexpected_error' });
    expect(format('model_missing', 'm')).toEqual({ message: 'm', error_code: 'unexpected_error' });
    expect(tryOn.jobError!.schema.safeParse({ message: 'm', error_code: 'image_too_small' }).success).toBe(false);
  });

  test('the others report imgtool codes as {code, message}', () => {
    expect(DEFAULT_JOB_ERROR.format('video_too_long', 'm')).toEqual({ code: 'video_too_long', message: 'm' });
  });
});
