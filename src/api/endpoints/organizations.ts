import type { Page } from '../pagination.js';
import { anObject, listOf, pageOf, withId } from '../response-shapes.js';
import type {
  AuditPage,
  AuditQuery,
  CreateInvitationInput,
  CreateTagInput,
  ImageFile,
  InvitationResult,
  Member,
  Organization,
  OrganizationSettings,
  PageParams,
  Tag,
  UpdateOrganizationInput,
} from '../types.js';
import {
  type EndpointContext,
  get,
  iterate,
  type ReadOptions,
  segment,
  type WriteOptions,
  write,
} from './shared.js';

const orgPath = (organizationId: string, rest = '') => `/organizations/${segment(organizationId)}${rest}`;

/** `/organizations/*`: the organizations the token sees, their settings, members, invitations, tags and audit. */
export class OrganizationsEndpoint {
  readonly #ctx: EndpointContext;

  constructor(ctx: EndpointContext) {
    this.#ctx = ctx;
  }

  /** One page of `GET /organizations` (no `organizationId` needed). */
  listPage(params: PageParams = {}, options?: ReadOptions): Promise<Page<Organization>> {
    const query = { first: params.first, after: params.after };
    return get(this.#ctx, { path: '/organizations', query, expect: pageOf(withId) }, options);
  }

  /** Every organization the token sees. */
  list(params: PageParams = {}): AsyncGenerator<Organization, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.listPage(p));
  }

  get(organizationId: string, options?: ReadOptions): Promise<Organization> {
    return get(this.#ctx, { path: orgPath(organizationId), expect: withId }, options);
  }

  update(
    organizationId: string,
    input: UpdateOrganizationInput,
    options?: WriteOptions,
  ): Promise<Organization> {
    return write(
      this.#ctx,
      { method: 'PUT', path: orgPath(organizationId), body: { json: input }, expect: withId },
      options,
    );
  }

  /** PNG, JPEG or WebP up to 2 MB; the server checks the real file signature (SVG is refused). */
  uploadLogo(organizationId: string, image: ImageFile, options?: WriteOptions): Promise<Organization> {
    return write(
      this.#ctx,
      {
        method: 'PUT',
        path: orgPath(organizationId, '/logo'),
        body: { multipart: [{ name: 'file', file: image }] },
        expect: withId,
      },
      options,
    );
  }

  deleteLogo(organizationId: string, options?: WriteOptions): Promise<Organization> {
    return write(
      this.#ctx,
      { method: 'DELETE', path: orgPath(organizationId, '/logo'), expect: withId },
      options,
    );
  }

  /** The audit journal, newest first, page-numbered (`page` from 1, `limit` 1..100). */
  audit(organizationId: string, query: AuditQuery = {}, options?: ReadOptions): Promise<AuditPage> {
    return get(
      this.#ctx,
      { path: orgPath(organizationId, '/audit'), query: { ...query }, expect: anObject },
      options,
    );
  }

  /** Only the fields present are applied; null clears; `letterDetails` is replaced as a whole. */
  updateSettings(
    organizationId: string,
    settings: OrganizationSettings,
    options?: WriteOptions,
  ): Promise<Organization> {
    return write(
      this.#ctx,
      { method: 'PUT', path: orgPath(organizationId, '/settings'), body: { json: settings }, expect: withId },
      options,
    );
  }

  invite(
    organizationId: string,
    input: CreateInvitationInput,
    options?: WriteOptions,
  ): Promise<InvitationResult> {
    return write(
      this.#ctx,
      { method: 'POST', path: orgPath(organizationId, '/invitations'), body: { json: input } },
      options,
    );
  }

  /** Cancels a pending invitation (204); the address is URL-encoded in the path. */
  async cancelInvitation(organizationId: string, email: string, options?: WriteOptions): Promise<void> {
    await write(
      this.#ctx,
      { method: 'DELETE', path: orgPath(organizationId, `/invitations/${segment(email)}`) },
      options,
    );
  }

  /** Every member (not paginated). */
  members(organizationId: string, options?: ReadOptions): Promise<Member[]> {
    return get(this.#ctx, { path: orgPath(organizationId, '/members'), expect: listOf(anObject) }, options);
  }

  async removeMember(organizationId: string, userId: string, options?: WriteOptions): Promise<void> {
    await write(
      this.#ctx,
      { method: 'DELETE', path: orgPath(organizationId, `/members/${segment(userId)}`) },
      options,
    );
  }

  /** Custom and predefined tags (a short list, not paginated). */
  tags(organizationId: string, options?: ReadOptions): Promise<Tag[]> {
    return get(this.#ctx, { path: orgPath(organizationId, '/tags'), expect: listOf(withId) }, options);
  }

  createTag(organizationId: string, input: CreateTagInput, options?: WriteOptions): Promise<Tag> {
    return write(
      this.#ctx,
      { method: 'POST', path: orgPath(organizationId, '/tags'), body: { json: input }, expect: withId },
      options,
    );
  }
}
