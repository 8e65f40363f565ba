import { describe, expect, it } from 'vitest';
import { invocation } from '../../../src/cli/invocation.js';

describe('invocation', () => {
  it('when the CLI came through a link on the PATH, then the hint is its name', () => {
    expect(invocation('/usr/local/bin/receivables-sync', '/home/me')).toBe('receivables-sync');
  });

  it('when node ran the script of a clone, then the hint runs it with node, its path relative when inside the working folder', () => {
    expect(invocation('/src/rs/bin/receivables-sync.js', '/src/rs')).toBe('node bin/receivables-sync.js');
    expect(invocation('/src/rs/bin/receivables-sync.js', '/tmp/elsewhere')).toBe(
      'node /src/rs/bin/receivables-sync.js',
    );
  });
});
