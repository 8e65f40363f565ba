import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import type { NotificationPreferences, User } from '../model.js';
import { PROFILE } from '../oauth/scopes.js';
import { imageFromUpload } from './images.js';
import { objectBody } from './organizations-validation.js';
import { userView } from './organizations-views.js';

/**
 * The authenticated user's own profile (scope `profile`). These commands are not organization
 * scoped, so they write no entry to any organization's audit journal.
 */

const DIGEST_FREQUENCIES: readonly NotificationPreferences['digestFrequency'][] = [
  'Daily',
  'Weekly',
  'Biweekly',
  'Monthly',
  'Never',
];

function parsePreferencesUpdate(body: unknown): Partial<NotificationPreferences> {
  const input = objectBody(body, ['digestFrequency', 'newsletter']);
  const update: Partial<NotificationPreferences> = {};
  if ('digestFrequency' in input) {
    const value = input.digestFrequency;
    if (!DIGEST_FREQUENCIES.includes(value as NotificationPreferences['digestFrequency'])) {
      throw badRequest(`digestFrequency must be one of ${DIGEST_FREQUENCIES.join(', ')}`);
    }
    update.digestFrequency = value as NotificationPreferences['digestFrequency'];
  }
  if ('newsletter' in input) {
    if (typeof input.newsletter !== 'boolean') throw badRequest('newsletter must be a boolean');
    update.newsletter = input.newsletter;
  }
  return update;
}

/** Routes of this area, registered under /api/public/v1. */
export function registerUserRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const me = (request: FastifyRequest): User => {
    const user = store.users.get(authOf(request).userId);
    if (!user) throw notFound('User');
    return user;
  };
  const preferencesOf = (user: User): NotificationPreferences => {
    if (!user.notificationPreferences) throw notFound('Notification preferences');
    return user.notificationPreferences;
  };

  app.get('/users/me/notification-preferences', requires(PROFILE), async (request) => ({
    ...preferencesOf(me(request)),
  }));

  // The body is checked before the lookup: an invalid request is 400 even without preferences.
  app.patch('/users/me/notification-preferences', requires(PROFILE), async (request) => {
    const update = parsePreferencesUpdate(request.body);
    const user = me(request);
    user.notificationPreferences = { ...preferencesOf(user), ...update };
    return { ...user.notificationPreferences };
  });

  app.put('/users/me/avatar', requires(PROFILE), async (request) => {
    const user = me(request);
    user.avatar = imageFromUpload(request.body);
    return userView(user);
  });

  app.delete('/users/me/avatar', requires(PROFILE), async (request) => {
    const user = me(request);
    if (!user.avatar) throw notFound('Avatar');
    user.avatar = null;
    return userView(user);
  });
}
