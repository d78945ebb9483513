import { describe, expect, test } from 'vitest';
import { liveTerminal } from '../../src/cli/progress.js';

describe('liveTerminal: when the CLI draws live progress', () => {
  test('a terminal wide enough for a bar, outside CI', () => {
    expect(liveTerminal({ isTTY: true, columns: 120 }, {})).toBe(true);
  });
  test('not on a pipe or a file, and not under CI', () => {
    expect(liveTerminal({ isTTY: false, columns: 120 }, {})).toBe(false);
    expect(liveTerminal({}, {})).toBe(false);
    expect(liveTerminal({ isTTY: true, columns: 120 }, { CI: 'true' })).toBe(false);
  });
  test('not on a pseudo-terminal of 0 columns or too narrow for one bar line (each redraw would wrap and scroll)', () => {
    expect(liveTerminal({ isTTY: true, columns: 0 }, {})).toBe(false);
    expect(liveTerminal({ isTTY: true }, {})).toBe(false);
    expect(liveTerminal({ isTTY: true, columns: 39 }, {})).toBe(false);
    expect(liveTerminal({ isTTY: true, columns: 40 }, {})).toBe(true);
  });
});
