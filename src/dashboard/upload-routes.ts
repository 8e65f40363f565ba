import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { dropFolderSettingsOf, type SourceConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import { messageOf } from '../domain/errors.js';
import type { SyncQueues } from '../jobs/types.js';
import type { Logger } from '../logging/logger.js';
import type { PausedSources } from '../state/paused-sources.js';
import { configOf, enqueue, usable } from './action-routes.js';
import { type DashboardAuth, refuse, wantsHtml } from './auth.js';
import type { DropUploads, UploadView } from './drop-uploads.js';
import { DashboardError } from './errors.js';
import { noticeQuery } from './notices.js';
import { signedInPage } from './signed-in-page.js';
import { uploadRefusalOf } from './upload-errors.js';
import type { HtmlValue } from './views/html.js';
import { banner } from './views/layout.js';
import { refusalPage } from './views/sign-in-page.js';
import { UPLOAD_CSS, UPLOAD_JS } from './views/upload-assets.js';
import { previewPage, uploadPage, uploadPagePath, uploadPath } from './views/upload-page.js';

export interface UploadRoutesProps {
  auth: DashboardAuth;
  sources: readonly SourceConfig[];
  /** Without it (a dashboard without the worker) the page says uploads need the worker. */
  uploads: DropUploads | undefined;
  queues: SyncQueues | undefined;
  paused: PausedSources;
  /** Whether `token` is the request's CSRF token (a multipart body is read after the preHandlers). */
  verifyCsrf: (request: FastifyRequest, token: unknown) => boolean;
  clock: Clock;
  logger: Logger;
}

type SourceParams = { Params: { sourceId: string } };
type UploadParams = { Params: { sourceId: string; uploadId: string } };

const CSRF_MESSAGE =
  'This upload did not come from a page of this dashboard (its form token is missing or stale): reload the page and try again.';

/**
 * The uploads to a CSV source's drop folder, in a scope of their own (the multipart parser and
 * the error pages are theirs alone):
 *
 * - `GET /sources/:id/upload`: the form (a drop zone around a file input) and the uploads waiting;
 * - `POST /sources/:id/uploads`: multipart, its `_csrf` field before the file (or `x-csrf-token`):
 *   the file is staged, then 303 to its preview (201 with JSON);
 * - `GET /sources/:id/uploads/:upload`: the preview (a dry run of that file alone);
 * - `POST .../sync`: into the drop folder, and a pass queued as Re-sync does; `POST .../discard`.
 *
 * A refused upload answers its status (400 name, 413 too large, 403 token, 404 unknown) with the
 * upload page and the reason, or `{ code, message }` to a script.
 */
export function registerUploadRoutes(app: FastifyInstance, props: UploadRoutesProps): void {
  const { auth, logger } = props;
  const sourceIds = new Set(props.sources.map((s) => s.id));

  const page = signedInPage({ auth, sourceIds, hasQueues: props.queues !== undefined });

  const formPage = async (request: FastifyRequest, config: SourceConfig, banners: HtmlValue[] = []) => {
    const { uploads } = props;
    return page(
      request,
      `Upload to ${config.id}`,
      uploadPage({
        config,
        csrfToken: auth.csrfToken(request),
        now: props.clock.now(),
        unavailable: uploads
          ? null
          : 'Uploads need the worker: the dashboard it serves (receivables-sync worker) previews and takes files.',
        maxBytes: uploads?.maxBytes ?? 0,
        namesTaken: uploads?.namesTaken(config) ?? '',
        waiting: uploads ? await uploads.list(config) : [],
      }),
      banners,
    );
  };

  app.register(async (scope) => {
    const maxBytes = props.uploads?.maxBytes ?? 0;
    // One file, a few fields; a byte past the limit tells a file too large (stage() counts them).
    await scope.register(multipart, {
      limits: { fileSize: maxBytes + 1, files: 1, fields: 4, parts: 6, fieldSize: 1024 },
      throwFileSizeLimit: false,
    });

    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      const failure = uploadRefusalOf(error);
      if (failure.status >= 500) logger.error({ err: error, url: request.url }, 'dashboard: upload failed');
      else
        logger.warn(
          { code: failure.code, url: request.url, reason: failure.message },
          'dashboard: upload refused',
        );
      reply.code(failure.status);
      if (!wantsHtml(request)) return reply.send({ code: failure.code, message: failure.message });
      const config = props.sources.find((s) => s.id === (request.params as { sourceId?: string }).sourceId);
      reply.type('text/html; charset=utf-8');
      if (config && dropFolderSettingsOf(config) && failure.code !== 'DASHBOARD_SOURCE_UNKNOWN')
        return reply.send(await formPage(request, config, [banner('error', failure.message)]));
      return reply.send(refusalPage(failure.status === 404 ? 'Not found' : 'Refused', failure.message).value);
    });

    scope.get('/assets/upload.css', (_request, reply) =>
      reply.type('text/css; charset=utf-8').header('cache-control', 'no-cache').send(UPLOAD_CSS),
    );
    scope.get('/assets/upload.js', (_request, reply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(UPLOAD_JS),
    );

    scope.get<SourceParams>('/sources/:sourceId/upload', async (request, reply) => {
      const config = csvSourceOf(props.sources, request.params.sourceId);
      return reply.type('text/html; charset=utf-8').send(await formPage(request, config));
    });

    scope.post<SourceParams>('/sources/:sourceId/uploads', async (request, reply) => {
      const config = csvSourceOf(props.sources, request.params.sourceId);
      const uploads = available(props.uploads);
      if (!request.isMultipart())
        throw new DashboardError('DASHBOARD_UPLOAD_INVALID', 400, 'send the file as multipart/form-data');
      let trusted = props.verifyCsrf(request, request.headers['x-csrf-token']);
      let staged: UploadView | null = null;
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (part.fieldname === '_csrf') trusted ||= props.verifyCsrf(request, part.value);
          continue;
        }
        // Read to its end unwritten: no token yet, a second file, or no file chosen at all.
        if (!trusted || staged || part.filename === '') {
          part.file.resume();
          continue;
        }
        try {
          staged = await uploads.stage(config, part.filename, part.file);
        } catch (error) {
          part.file.resume();
          throw error;
        }
      }
      if (!trusted) {
        logger.warn(
          { url: request.url, ip: request.ip },
          'dashboard: upload refused, CSRF token missing or wrong',
        );
        return refuse(reply.code(403), request, 'DASHBOARD_CSRF_REFUSED', CSRF_MESSAGE);
      }
      if (!staged)
        throw new DashboardError('DASHBOARD_UPLOAD_EMPTY', 400, 'no file was sent: choose one first');
      logger.info(
        {
          sourceId: config.id,
          file: staged.name,
          size: staged.size,
          user: auth.principal(request).user ?? 'local',
        },
        'dashboard: file uploaded, waiting for its preview',
      );
      const location = uploadPath(config.id, staged.id);
      if (wantsJson(request))
        return reply.code(201).send({ result: 'staged', upload: staged, preview: location });
      return reply.redirect(location, 303);
    });

    scope.get<UploadParams>('/sources/:sourceId/uploads/:uploadId', async (request, reply) => {
      const config = csvSourceOf(props.sources, request.params.sourceId);
      const uploads = available(props.uploads);
      const preview = await uploads.preview(config, request.params.uploadId);
      if (!preview) throw unknownUpload(request.params.uploadId);
      if (!wantsHtml(request)) return reply.send(preview);
      const whyNot = await whyNotQueued(props, config.id);
      const body = previewPage({
        config,
        csrfToken: auth.csrfToken(request),
        now: props.clock.now(),
        preview,
        whyNot,
      });
      return reply
        .type('text/html; charset=utf-8')
        .send(page(request, `Preview of ${preview.upload.name}`, body));
    });

    scope.post<UploadParams>(
      '/sources/:sourceId/uploads/:uploadId/sync',
      { preHandler: auth.requireCsrf },
      async (request, reply) => {
        const config = csvSourceOf(props.sources, request.params.sourceId);
        const uploads = available(props.uploads);
        const queues = await usable(props, config.id);
        const { name } = await uploads.take(config, request.params.uploadId);
        const { jobId, deduplicated } = await enqueue(() =>
          queues.enqueueSourceSync(config.id, { trigger: 'manual' }),
        );
        const user = auth.principal(request).user ?? 'local';
        logger.info({ sourceId: config.id, file: name, user, jobId }, 'dashboard action: upload synced');
        if (wantsJson(request))
          return reply
            .code(202)
            .send({ result: 'upload-queued', source: config.id, job: jobId, file: name, deduplicated });
        const notice = { code: 'upload-queued', source: config.id, job: jobId, key: name };
        return reply.redirect(noticeQuery(notice, `/sources/${encodeURIComponent(config.id)}`), 303);
      },
    );

    scope.post<UploadParams>(
      '/sources/:sourceId/uploads/:uploadId/discard',
      { preHandler: auth.requireCsrf },
      async (request, reply) => {
        const config = csvSourceOf(props.sources, request.params.sourceId);
        const gone = await available(props.uploads).discard(config, request.params.uploadId);
        if (!gone) throw unknownUpload(request.params.uploadId);
        logger.info(
          { sourceId: config.id, file: gone.name, user: auth.principal(request).user ?? 'local' },
          'dashboard action: upload discarded',
        );
        if (wantsJson(request))
          return reply.send({ result: 'upload-discarded', source: config.id, file: gone.name });
        const notice = { code: 'upload-discarded', source: config.id, key: gone.name };
        return reply.redirect(noticeQuery(notice, uploadPagePath(config.id)), 303);
      },
    );
  });
}

const wantsJson = (request: FastifyRequest): boolean =>
  !wantsHtml(request) && (request.headers.accept ?? '').includes('application/json');

/** A configured CSV source; any other is refused (only a drop folder takes files). */
function csvSourceOf(sources: readonly SourceConfig[], sourceId: string): SourceConfig {
  const config = configOf(sources, sourceId);
  if (!dropFolderSettingsOf(config))
    throw new DashboardError(
      'DASHBOARD_UPLOAD_UNSUPPORTED',
      400,
      `${config.id} is a ${config.type} source: only CSV sources (a drop folder) take uploaded files`,
      { details: { source: config.id } },
    );
  return config;
}

function available(uploads: DropUploads | undefined): DropUploads {
  if (uploads) return uploads;
  throw new DashboardError(
    'DASHBOARD_UPLOADS_UNAVAILABLE',
    503,
    'uploads need the worker: the dashboard it serves (receivables-sync worker) previews and takes files',
  );
}

const unknownUpload = (id: string) =>
  new DashboardError(
    'DASHBOARD_UPLOAD_UNKNOWN',
    404,
    `no upload waits under ${id}: synced or discarded already`,
  );

/** Why "Sync now" cannot queue a pass (no queues, the source paused); null when it can. */
async function whyNotQueued(
  props: Pick<UploadRoutesProps, 'queues' | 'paused'>,
  sourceId: string,
): Promise<string | null> {
  try {
    await usable(props, sourceId);
    return null;
  } catch (error) {
    return messageOf(error);
  }
}
