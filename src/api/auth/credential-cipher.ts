import { createCipheriv, createDecipheriv, randomBytes, scrypt } from 'node:crypto';
import { CredentialStoreError } from './auth-errors.js';

/**
 * AES-256-GCM for credentials at rest. The key comes from `RECEIVABLES_TOKEN_KEY`:
 * - 32 random bytes written as 64 hex characters or as base64 (`openssl rand -base64 32`): used as is;
 * - anything else of at least 12 characters: a passphrase, stretched with scrypt and a random
 *   per-file salt kept in the envelope.
 * Every write draws a fresh 12-byte IV; the envelope's header is authenticated (AAD), so a changed
 * header, IV, tag or ciphertext is refused.
 */
export interface SealedEnvelope {
  format: typeof FORMAT;
  v: 1;
  alg: 'A256GCM';
  kdf: 'none' | 'scrypt';
  /** base64; only with kdf scrypt. */
  salt?: string;
  iv: string;
  tag: string;
  data: string;
}

const FORMAT = 'receivables-sync.credentials' as const;
const MIN_PASSPHRASE = 12;
/** scrypt cost: ~50 ms and 32 MiB, once per salt per process (the derived key is cached). */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

type KeyMaterial = { kind: 'raw'; key: Buffer } | { kind: 'passphrase'; passphrase: string };

/** Reads the configured key; throws a CredentialStoreError that says how to make one. */
export function parseTokenKey(raw: string | undefined): KeyMaterial {
  const value = raw?.trim() ?? '';
  if (value === '') {
    throw new CredentialStoreError(
      'RECEIVABLES_TOKEN_KEY is not set: tokens are stored encrypted and need a key. ' +
        'Create one with `openssl rand -base64 32` and export it as RECEIVABLES_TOKEN_KEY.',
    );
  }
  if (/^[0-9a-fA-F]{64}$/.test(value)) return { kind: 'raw', key: Buffer.from(value, 'hex') };
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) {
    const key = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === 32) return { kind: 'raw', key };
  }
  if (value.length < MIN_PASSPHRASE) {
    throw new CredentialStoreError(
      `RECEIVABLES_TOKEN_KEY is too short: give 32 random bytes (64 hex or base64 characters) or a passphrase of at least ${MIN_PASSPHRASE} characters.`,
    );
  }
  return { kind: 'passphrase', passphrase: value };
}

/** Seals and opens credential records with one key. Derived passphrase keys are cached per salt. */
export class CredentialCipher {
  readonly #material: KeyMaterial;
  readonly #derived = new Map<string, Promise<Buffer>>();
  /** The salt of the last file opened, reused on the next write so one derivation serves both. */
  #salt: Buffer | undefined;

  constructor(tokenKey: string | undefined) {
    this.#material = parseTokenKey(tokenKey);
  }

  async seal(plaintext: Buffer): Promise<SealedEnvelope> {
    if (this.#material.kind === 'passphrase' && !this.#salt) this.#salt = randomBytes(16);
    const salt = this.#material.kind === 'passphrase' ? this.#salt : undefined;
    const header = {
      format: FORMAT,
      v: 1 as const,
      alg: 'A256GCM' as const,
      kdf: salt ? ('scrypt' as const) : ('none' as const),
      ...(salt ? { salt: salt.toString('base64') } : {}),
    };
    const key = await this.#keyFor(salt);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(header));
    const data = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return {
      ...header,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    };
  }

  async open(envelope: unknown, where: string): Promise<Buffer> {
    const e = checkEnvelope(envelope, where);
    const salt = e.salt === undefined ? undefined : Buffer.from(e.salt, 'base64');
    if ((e.kdf === 'scrypt') !== (this.#material.kind === 'passphrase')) {
      throw new CredentialStoreError(
        `${where} was written with a ${e.kdf === 'scrypt' ? 'passphrase' : 'raw 32-byte key'}, but RECEIVABLES_TOKEN_KEY holds a ${this.#material.kind === 'raw' ? 'raw key' : 'passphrase'}: use the key it was written with, or log in again.`,
      );
    }
    const key = await this.#keyFor(salt);
    const header = { format: e.format, v: e.v, alg: e.alg, kdf: e.kdf, ...(e.salt ? { salt: e.salt } : {}) };
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(e.iv, 'base64'));
      decipher.setAAD(aad(header));
      decipher.setAuthTag(Buffer.from(e.tag, 'base64'));
      const plaintext = Buffer.concat([decipher.update(Buffer.from(e.data, 'base64')), decipher.final()]);
      if (salt) this.#salt = salt;
      return plaintext;
    } catch (cause) {
      throw new CredentialStoreError(
        `${where} cannot be decrypted: RECEIVABLES_TOKEN_KEY is not the key it was written with, or the file was modified. Log in again to replace it.`,
        { cause },
      );
    }
  }

  #keyFor(salt: Buffer | undefined): Promise<Buffer> {
    const material = this.#material;
    if (material.kind === 'raw') return Promise.resolve(material.key);
    if (!salt) throw new CredentialStoreError('a passphrase key needs a salt');
    const id = salt.toString('base64');
    let key = this.#derived.get(id);
    if (!key) {
      key = new Promise<Buffer>((resolve, reject) =>
        scrypt(material.passphrase, salt, 32, SCRYPT, (error, derived) =>
          error ? reject(error) : resolve(derived),
        ),
      );
      this.#derived.set(id, key);
    }
    return key;
  }
}

const aad = (header: object) => Buffer.from(JSON.stringify(header));

function checkEnvelope(value: unknown, where: string): SealedEnvelope {
  const e = value as Partial<SealedEnvelope> | null;
  const ok =
    typeof e === 'object' &&
    e !== null &&
    e.format === FORMAT &&
    e.v === 1 &&
    e.alg === 'A256GCM' &&
    (e.kdf === 'none' || (e.kdf === 'scrypt' && typeof e.salt === 'string')) &&
    typeof e.iv === 'string' &&
    typeof e.tag === 'string' &&
    typeof e.data === 'string';
  if (!ok)
    throw new CredentialStoreError(`${where} is not a receivables-sync credentials file (unknown format)`);
  return e as SealedEnvelope;
}
