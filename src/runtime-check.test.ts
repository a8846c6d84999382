import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from './runtime-check.js';

describe('nodeVersionProblem', () => {
  it.each(['22.19.0', '22.23.3', '23.0.0', '24.0.0', '24.21.0', '26.10.0'])('accepts Node %s', (version) => {
    expect(nodeVersionProblem(version)).toBeNull();
  });

  it.each(['20.20.2', '22.18.9', '21.7.3', '18.20.0'])('refuses Node %s with one line naming the need', (version) => {
    const problem = nodeVersionProblem(version);
    expect(problem).toContain('Node.js 22.19 or later');
    expect(problem).toContain(version);
    expect(problem).not.toContain('\n');
  });
});
