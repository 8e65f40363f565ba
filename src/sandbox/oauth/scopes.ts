/** The scopes of the Public API. An endpoint accepts any one of the scopes listed for it. */
export const ALL_SCOPES = [
  'organizations:read',
  'organizations:all',
  'accounts:read',
  'accounts:all',
  'profile',
  'communications:read',
  'dunning:manage',
] as const;

export type Scope = (typeof ALL_SCOPES)[number];

export const ORGANIZATIONS_READ: readonly Scope[] = ['organizations:read', 'organizations:all'];
export const ORGANIZATIONS_WRITE: readonly Scope[] = ['organizations:all'];
export const ACCOUNTS_READ: readonly Scope[] = ['accounts:read', 'accounts:all'];
export const ACCOUNTS_WRITE: readonly Scope[] = ['accounts:all'];
export const PROFILE: readonly Scope[] = ['profile'];
export const COMMUNICATIONS_READ: readonly Scope[] = ['communications:read', 'dunning:manage'];

export const isScope = (value: string): value is Scope => (ALL_SCOPES as readonly string[]).includes(value);
