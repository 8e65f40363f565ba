import type { ReadStream } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import type { DropFileView } from '../state/detail-queries.js';
import { DashboardError } from './errors.js';

export interface ReportDownload {
  fileName: string;
  contentType: string;
  stream: ReadStream;
}

/**
 * A drop file's report (`<name>.errors.csv`, `<name>.reason.txt`) for download. Only a file under
 * the source's drop folder (`dropDir` as configured; null: the source takes no files) is served,
 * by its real path with symlinks resolved, whatever the ledger says.
 *
 * @throws DashboardError 404 `DASHBOARD_REPORT_MISSING` when the file has no report, or it is gone
 *   (an archive cleaned up, a dashboard on another machine than the drop folder).
 */
export async function reportFile(
  configuredDropDir: string | null,
  file: DropFileView | null,
): Promise<ReportDownload> {
  const missing = (why: string) => new DashboardError('DASHBOARD_REPORT_MISSING', 404, why);
  if (configuredDropDir === null || !file?.reportPath) throw missing('this file has no report');
  let real: string;
  let dropDir: string;
  try {
    dropDir = await realpath(resolve(configuredDropDir));
    real = await realpath(resolve(dropDir, file.reportPath));
  } catch {
    throw missing(`the report of ${file.name} is no longer on this machine`);
  }
  const inside = relative(dropDir, real);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside))
    throw missing(`the report of ${file.name} is outside the drop folder`);
  const handle = await open(real, 'r').catch(() => null);
  if (!handle) throw missing(`the report of ${file.name} cannot be read`);
  const isFile = (await handle.stat()).isFile();
  if (!isFile) {
    await handle.close();
    throw missing(`the report of ${file.name} is not a file`);
  }
  const name = basename(real).replace(/[^\w.-]+/g, '_');
  return {
    fileName: name,
    contentType: name.endsWith('.csv') ? 'text/csv; charset=utf-8' : 'text/plain; charset=utf-8',
    stream: handle.createReadStream(),
  };
}
