import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePdf } from '../../../src/records/pdf-file.js';

const PDF = '%PDF-1.4\n%minimal\n';
let base: string;
let drop: string;
let outside: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'pdf-file-')));
  drop = join(base, 'drop');
  outside = join(base, 'outside');
  await mkdir(join(drop, 'pdf', 'nested'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(drop, 'pdf', 'ok.pdf'), PDF);
  await writeFile(join(drop, 'pdf', 'nested', 'deep.pdf'), PDF);
  await writeFile(join(drop, 'pdf', 'text.pdf'), 'not a pdf at all');
  await writeFile(join(drop, 'pdf', 'empty.pdf'), '');
  await writeFile(join(outside, 'secret.pdf'), PDF);
  await symlink(join(outside, 'secret.pdf'), join(drop, 'pdf', 'link-out.pdf'));
  await symlink(outside, join(drop, 'dir-link-out'));
  await symlink(join(drop, 'pdf', 'ok.pdf'), join(drop, 'pdf', 'link-in.pdf'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('resolvePdf', () => {
  it('when the path names a PDF inside the drop folder, then it gives its absolute real path', async () => {
    expect(await resolvePdf(drop, 'pdf/ok.pdf')).toEqual({ ok: true, value: join(drop, 'pdf', 'ok.pdf') });
    expect(await resolvePdf(drop, './pdf/nested/deep.pdf')).toEqual({
      ok: true,
      value: join(drop, 'pdf', 'nested', 'deep.pdf'),
    });
  });

  it('when a symlink stays inside the drop folder, then it resolves to its target', async () => {
    expect(await resolvePdf(drop, 'pdf/link-in.pdf')).toEqual({
      ok: true,
      value: join(drop, 'pdf', 'ok.pdf'),
    });
  });

  it('when the path climbs with "..", even back inside, then it is refused before touching the disk', async () => {
    for (const value of ['../outside/secret.pdf', 'pdf/../pdf/ok.pdf', 'pdf\\..\\..\\outside\\secret.pdf']) {
      expect(await resolvePdf(drop, value), value).toEqual({
        ok: false,
        reason: `must stay inside the drop folder (no ".." in the path): "${value}"`,
      });
    }
  });

  it('when the path is absolute, then it is refused', async () => {
    for (const value of [
      join(outside, 'secret.pdf'),
      '/etc/passwd',
      'C:\\invoices\\a.pdf',
      '\\\\server\\share\\a.pdf',
    ]) {
      const result = await resolvePdf(drop, value);
      expect(result.ok, value).toBe(false);
      expect(!result.ok && result.reason, value).toMatch(/not an absolute path/);
    }
  });

  it('when a symlink (to a file or through a folder) leads outside the drop folder, then it is refused', async () => {
    for (const value of ['pdf/link-out.pdf', 'dir-link-out/secret.pdf']) {
      expect(await resolvePdf(drop, value), value).toEqual({
        ok: false,
        reason: `must stay inside the drop folder, but it links outside it: "${value}"`,
      });
    }
  });

  it('when the file does not exist, then the reason says so', async () => {
    expect(await resolvePdf(drop, 'pdf/missing.pdf')).toEqual({
      ok: false,
      reason: 'file not found: "pdf/missing.pdf"',
    });
    expect(await resolvePdf(drop, 'pdf/ok.pdf/x.pdf')).toEqual({
      ok: false,
      reason: 'file not found: "pdf/ok.pdf/x.pdf"',
    });
  });

  it('when the file is not a PDF (no %PDF- signature), empty, or a folder, then it is refused', async () => {
    expect(await resolvePdf(drop, 'pdf/text.pdf')).toEqual({
      ok: false,
      reason: 'not a PDF (it does not start with the %PDF- signature): "pdf/text.pdf"',
    });
    expect((await resolvePdf(drop, 'pdf/empty.pdf')).ok).toBe(false);
    expect(await resolvePdf(drop, 'pdf/nested')).toEqual({
      ok: false,
      reason: 'not a regular file: "pdf/nested"',
    });
  });
});
