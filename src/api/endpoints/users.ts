import { anObject, preferencesShape } from '../response-shapes.js';
import type { ImageFile, Member, NotificationPreferences } from '../types.js';
import { type EndpointContext, get, type ReadOptions, type WriteOptions, write } from './shared.js';

const ME = '/users/me';

/** `/users/me/*`: the authenticated user's own profile (scope `profile`), across organizations. */
export class UsersEndpoint {
  readonly #ctx: EndpointContext;

  constructor(ctx: EndpointContext) {
    this.#ctx = ctx;
  }

  notificationPreferences(options?: ReadOptions): Promise<NotificationPreferences> {
    return get(this.#ctx, { path: `${ME}/notification-preferences`, expect: preferencesShape }, options);
  }

  /** Omitted fields keep their value. */
  updateNotificationPreferences(
    update: Partial<NotificationPreferences>,
    options?: WriteOptions,
  ): Promise<NotificationPreferences> {
    return write(
      this.#ctx,
      {
        method: 'PATCH',
        path: `${ME}/notification-preferences`,
        body: { json: update },
        expect: preferencesShape,
      },
      options,
    );
  }

  /** PNG, JPEG or WebP up to 2 MB. */
  uploadAvatar(image: ImageFile, options?: WriteOptions): Promise<Member> {
    return write(
      this.#ctx,
      {
        method: 'PUT',
        path: `${ME}/avatar`,
        body: { multipart: [{ name: 'file', file: image }] },
        expect: anObject,
      },
      options,
    );
  }

  deleteAvatar(options?: WriteOptions): Promise<Member> {
    return write(this.#ctx, { method: 'DELETE', path: `${ME}/avatar`, expect: anObject }, options);
  }
}
