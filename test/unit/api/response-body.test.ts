import { describe, expect, it } from 'vitest';
import { ApiResponseError, UnexpectedResponseError } from '../../../src/api/errors.js';
import { type Answer, errorOfAnswer, excerptOf, successBody } from '../../../src/api/response-body.js';
import {
  accountShape,
  documentShape,
  listOf,
  pageOf,
  preferencesShape,
  withId,
} from '../../../src/api/response-shapes.js';

const NGINX_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n';

const answer = (status: number, text: string, contentType?: string, extra: Partial<Answer> = {}): Answer => ({
  method: 'POST',
  path: '/api/public/v1/accounts',
  status,
  headers: new Headers(contentType ? { 'content-type': contentType } : {}),
  text,
  ...extra,
});

describe('excerptOf', () => {
  it('when the body is a load balancer page, then its tags and head are gone and whitespace is collapsed', () => {
    expect(excerptOf(NGINX_502, 'text/html')).toBe('502 Bad Gateway nginx/1.25.3');
  });

  it('when a page has nothing but a title, then the title is kept', () => {
    expect(excerptOf('<html><head><title>Maintenance</title></head><body></body></html>')).toBe(
      'Maintenance',
    );
  });

  it('when a page has scripts, styles, comments and entities, then only its text is left', () => {
    const page =
      '<!doctype html><style>p{color:red}</style><script>var x = "<b>"</script><!-- note --><p>Fish &amp; chips &#8364;5&nbsp;only</p>';
    expect(excerptOf(page, 'text/html')).toBe('Fish & chips €5 only');
  });

  it('when the body is long or holds control characters, then it is cut at 200 characters with an ellipsis', () => {
    const shown = excerptOf(`a\u0000b\u001b[31m${'x'.repeat(500)}`, 'text/plain');
    expect(shown.startsWith('a b [31mxxx')).toBe(true);
    expect(Array.from(shown)).toHaveLength(200);
    expect(shown.endsWith('…')).toBe(true);
  });

  it('when the cut falls inside an emoji, then no half character is left', () => {
    const shown = excerptOf('😀'.repeat(300), 'text/plain', 10);
    expect(shown).toBe(`${'😀'.repeat(9)}…`);
  });
});

describe('successBody', () => {
  it('when a create answers {}, then RESPONSE_INVALID names the status, the type and what is missing', () => {
    const error = (() => {
      try {
        successBody(answer(201, '{}', 'application/json; charset=utf-8'), accountShape);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({
      code: 'RESPONSE_INVALID',
      kind: 'infrastructure',
      retryable: true,
      status: 201,
      contentType: 'application/json',
    });
    expect((error as Error).message).toBe(
      'POST /api/public/v1/accounts answered 201 (application/json) without what the contract gives (no "id"): {}',
    );
  });

  it('when a create answers an empty 201, then the message says the body is empty, never a TypeError', () => {
    expect(() => successBody(answer(201, ''), accountShape)).toThrow(
      'POST /api/public/v1/accounts answered 201 (no content type) with an empty body where the contract gives one',
    );
  });

  it('when nothing is expected of the answer, then an empty body is undefined and any JSON passes', () => {
    expect(successBody(answer(204, ''), undefined)).toBeUndefined();
    expect(successBody(answer(200, '{}'), undefined)).toEqual({});
  });

  it('when the body is what the contract gives, then it is handed over as parsed', () => {
    const body = { id: 'a1', source: { connectionId: 'c', sourceId: 'S-1', connectorType: 'Custom' } };
    expect(successBody(answer(201, JSON.stringify(body)), accountShape)).toEqual(body);
  });
});

describe('errorOfAnswer', () => {
  it('when the API answers its JSON error, then its code, message and resolution are kept', () => {
    const error = errorOfAnswer(
      answer(
        404,
        JSON.stringify({ code: 'NOT_FOUND', message: 'Organization not found', resolution: 'check' }),
      ),
    );
    expect(error).toBeInstanceOf(ApiResponseError);
    expect(error).toMatchObject({ code: 'NOT_FOUND', status: 404, resolution: 'check', kind: 'data' });
  });

  it('when a load balancer answers 502 in HTML, then the message has the status and a short excerpt, no markup', () => {
    const error = errorOfAnswer(answer(502, NGINX_502, 'text/html', { retryAfterSeconds: 3 }));
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'HTTP_502', status: 502, retryable: true, retryAfterSeconds: 3 });
    expect(error.message).toBe(
      "POST /api/public/v1/accounts answered 502 (text/html) and a body that is not the API's JSON error: 502 Bad Gateway nginx/1.25.3",
    );
  });

  it('when a load balancer answers 404 in HTML, then it is no ApiResponseError: nothing reads it as a missing resource', () => {
    const error = errorOfAnswer(
      answer(404, '<html><body><h1>404 Not Found</h1><hr>nginx</body></html>', 'text/html'),
    );
    expect(error).not.toBeInstanceOf(ApiResponseError);
    expect(error).toMatchObject({ code: 'HTTP_404', kind: 'infrastructure', retryable: false, status: 404 });
    expect(error.message).toMatch(/answered 404 \(text\/html\) .*: 404 Not Found nginx$/);
  });

  it('when a framework answers an unknown route in HTML, then it stays the server refusing the route (api.compat)', () => {
    const error = errorOfAnswer(
      answer(404, '<pre>Cannot PATCH /api/public/v1/invoices/1</pre>', 'text/html', { method: 'PATCH' }),
    );
    expect(error).toBeInstanceOf(ApiResponseError);
    expect(error.message).toMatch(/answered 404 HTTP_404: Cannot PATCH \/api\/public\/v1\/invoices\/1$/);
  });

  it('when a proxy refuses the upload as too large in HTML, then the record is still what it refused', () => {
    const error = errorOfAnswer(answer(413, '<h1>413 Request Entity Too Large</h1>', 'text/html'));
    expect(error).toMatchObject({ kind: 'data', retryable: false, status: 413 });
  });

  it('when an error answer has an empty body, then it says so', () => {
    expect(errorOfAnswer(answer(503, '')).message).toBe(
      'POST /api/public/v1/accounts answered 503 (no content type) with an empty body',
    );
  });
});

describe('response shapes', () => {
  it.each([
    [withId, {}, 'no "id"'],
    [withId, { id: '' }, 'no "id"'],
    [withId, null, 'null where an object is due'],
    [withId, [], 'an array where an object is due'],
    [accountShape, { id: 'a', source: 'S-1' }, '"source" is a string, neither a source reference nor null'],
    [accountShape, { id: 'a', source: {} }, '"source" without its "connectionId" and "sourceId"'],
    [documentShape, { id: 'd', sourceId: 7 }, '"sourceId" is a number'],
    [pageOf(withId), {}, 'no "nodes" list'],
    [pageOf(withId), { nodes: [{ id: 'a' }, {}] }, 'nodes[1]: no "id"'],
    [pageOf(withId), { nodes: [], pageInfo: { endCursor: 3 } }, '"pageInfo.endCursor" is a number'],
    [listOf(withId), { nodes: [] }, 'an object where a list is due'],
    [preferencesShape, { digestFrequency: 'Daily' }, 'no boolean "newsletter"'],
  ])('when %o meets %j, then it says %s', (shape, body, said) => {
    expect(shape(body)).toBe(said);
  });

  it.each([
    [accountShape, { id: 'a', source: null }],
    [accountShape, { id: 'a' }],
    [documentShape, { id: 'd', sourceId: null }],
    [pageOf(withId), { nodes: [{ id: 'a' }], pageInfo: { endCursor: null } }],
    [pageOf(withId), { nodes: [] }],
    [listOf(withId), [{ id: 't' }]],
    [preferencesShape, { digestFrequency: 'Daily', newsletter: true }],
  ])('when %o meets the contract’s %j, then it passes', (shape, body) => {
    expect(shape(body)).toBeUndefined();
  });
});
