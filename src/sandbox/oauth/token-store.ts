import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../domain/clock.js';
import type { Scope } from './scopes.js';

export interface AccessGrant {
  clientId: string;
  userId: string;
  scopes: readonly Scope[];
  /** Epoch ms; null = never expires (the token the sandbox prints at start). */
  expiresAt: number | null;
  familyId: string;
}

interface RefreshGrant extends AccessGrant {
  used: boolean;
}

export interface AuthorizationCode {
  clientId: string;
  userId: string;
  scopes: readonly Scope[];
  redirectUri: string;
  codeChallenge: string;
  expiresAt: number;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scopes: readonly Scope[];
}

const newSecret = (prefix: string) => `${prefix}_${randomBytes(24).toString('base64url')}`;

/**
 * Access tokens, rotating refresh tokens and authorization codes. A refresh token is good once:
 * presenting a used one revokes its whole family (OAuth 2.1 reuse detection).
 */
export class TokenStore {
  readonly #access = new Map<string, AccessGrant>();
  readonly #refresh = new Map<string, RefreshGrant>();
  readonly #codes = new Map<string, AuthorizationCode>();
  readonly #revokedFamilies = new Set<string>();
  /** How many token-endpoint grants succeeded, for tests that count refreshes. */
  issuedCount = 0;

  constructor(
    private readonly clock: Clock,
    private readonly ttl: { accessSeconds: number; refreshSeconds: number; codeSeconds: number },
  ) {}

  /** A long-lived access token with no refresh token: what `sandbox` prints for trials. */
  mintStatic(grant: Omit<AccessGrant, 'expiresAt' | 'familyId'>, token = newSecret('sbx_at')): string {
    this.#access.set(token, { ...grant, expiresAt: null, familyId: newSecret('fam') });
    return token;
  }

  /** Tokens for a grant, as the token endpoint issues them. */
  issue(grant: Omit<AccessGrant, 'expiresAt' | 'familyId'>, familyId = newSecret('fam')): IssuedTokens {
    const now = this.clock.now().getTime();
    const accessToken = newSecret('sbx_at');
    const refreshToken = newSecret('sbx_rt');
    this.#access.set(accessToken, { ...grant, familyId, expiresAt: now + this.ttl.accessSeconds * 1000 });
    this.#refresh.set(refreshToken, {
      ...grant,
      familyId,
      expiresAt: now + this.ttl.refreshSeconds * 1000,
      used: false,
    });
    this.issuedCount++;
    return { accessToken, refreshToken, expiresIn: this.ttl.accessSeconds, scopes: grant.scopes };
  }

  /** The grant behind a live access token, or undefined (unknown, expired or revoked). */
  verifyAccess(token: string): AccessGrant | undefined {
    const grant = this.#access.get(token);
    if (!grant || this.#revokedFamilies.has(grant.familyId)) return undefined;
    if (grant.expiresAt !== null && grant.expiresAt <= this.clock.now().getTime()) return undefined;
    return grant;
  }

  saveCode(code: AuthorizationCode): string {
    const value = newSecret('sbx_code');
    this.#codes.set(value, code);
    return value;
  }

  /** An authorization code is single use: taking it removes it. */
  takeCode(code: string): AuthorizationCode | undefined {
    const found = this.#codes.get(code);
    this.#codes.delete(code);
    if (!found || found.expiresAt <= this.clock.now().getTime()) return undefined;
    return found;
  }

  /**
   * Rotates a refresh token. Returns 'invalid' for an unknown/expired/revoked token, 'reused' when
   * the token was already rotated (the family is then revoked, its access tokens included).
   */
  rotate(refreshToken: string, clientId: string): IssuedTokens | 'invalid' | 'reused' {
    const grant = this.#refresh.get(refreshToken);
    if (!grant || grant.clientId !== clientId || this.#revokedFamilies.has(grant.familyId)) return 'invalid';
    if (grant.used) {
      this.#revokedFamilies.add(grant.familyId);
      return 'reused';
    }
    if (grant.expiresAt !== null && grant.expiresAt <= this.clock.now().getTime()) return 'invalid';
    grant.used = true;
    return this.issue({ clientId, userId: grant.userId, scopes: grant.scopes }, grant.familyId);
  }

  isFamilyRevoked(familyId: string): boolean {
    return this.#revokedFamilies.has(familyId);
  }
}

/** PKCE S256: BASE64URL(SHA256(verifier)). */
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
