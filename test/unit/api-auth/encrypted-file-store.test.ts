import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialStoreError } from '../../../src/api/auth/auth-errors.js';
import { parseTokenKey } from '../../../src/api/auth/credential-cipher.js';
import { EncryptedFileStore } from '../../../src/api/auth/encrypted-file-store.js';
import type { StoredCredentials } from '../../../src/api/auth/token-storage.js';
import { createLogger } from '../../../src/logging/logger.js';

const HEX_KEY = randomBytes(32).toString('hex');
const credentials = (over: Partial<StoredCredentials> = {}): StoredCredentials => ({
  issuer: 'https://auth.example.test',
  tokenEndpoint: 'https://auth.example.test/api/oauth/token',
  clientId: 'receivables-sync',
  accessToken: 'at_secret_value_1234567890',
  accessTokenExpiresAt: 1_800_000_000_000,
  refreshToken: 'rt_secret_value_0987654321',
  scopes: ['accounts:all', 'organizations:read'],
  obtainedAt: 1_799_999_000_000,
  ...over,
});

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rs-creds-'));
  path = join(dir, 'nested', 'credentials.enc');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('encrypted credentials file', () => {
  it.each([
    ['64 hex characters', HEX_KEY],
    ['base64 of 32 bytes', randomBytes(32).toString('base64')],
    ['base64url of 32 bytes', randomBytes(32).toString('base64url')],
    ['a passphrase', 'correct horse battery staple'],
  ])('when the key is %s, then what is saved loads back identical', async (_kind, key) => {
    const store = new EncryptedFileStore({ path, tokenKey: key });
    await store.save(credentials());
    expect(await new EncryptedFileStore({ path, tokenKey: key }).load()).toEqual(credentials());
  });

  it('when saved, then the file is 0600 in a 0700 folder and holds no token in clear', async () => {
    await new EncryptedFileStore({ path, tokenKey: HEX_KEY }).save(credentials());
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'nested'))).mode & 0o777).toBe(0o700);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('at_secret_value');
    expect(text).not.toContain('rt_secret_value');
    expect(text).not.toContain('accounts:all');
  });

  it('when saved twice with the same content, then each write uses a fresh IV', async () => {
    const store = new EncryptedFileStore({ path, tokenKey: HEX_KEY });
    await store.save(credentials());
    const first = JSON.parse(await readFile(path, 'utf8'));
    await store.save(credentials());
    const second = JSON.parse(await readFile(path, 'utf8'));
    expect(second.iv).not.toBe(first.iv);
    expect(second.data).not.toBe(first.data);
  });

  it('when one byte of the ciphertext is changed, then loading fails with CredentialStoreError', async () => {
    await new EncryptedFileStore({ path, tokenKey: HEX_KEY }).save(credentials());
    const envelope = JSON.parse(await readFile(path, 'utf8'));
    const data = Buffer.from(envelope.data, 'base64');
    data[5] = data[5]! ^ 0x01;
    await writeFile(path, JSON.stringify({ ...envelope, data: data.toString('base64') }));
    await expect(new EncryptedFileStore({ path, tokenKey: HEX_KEY }).load()).rejects.toThrow(
      CredentialStoreError,
    );
  });

  it('when the authenticated header is changed, then loading fails', async () => {
    await new EncryptedFileStore({ path, tokenKey: 'a passphrase of some length' }).save(credentials());
    const envelope = JSON.parse(await readFile(path, 'utf8'));
    await writeFile(path, JSON.stringify({ ...envelope, salt: randomBytes(16).toString('base64') }));
    await expect(
      new EncryptedFileStore({ path, tokenKey: 'a passphrase of some length' }).load(),
    ).rejects.toThrow(/cannot be decrypted/);
  });

  it('when the key is another one, then loading fails with a message naming the key, not the secret', async () => {
    await new EncryptedFileStore({ path, tokenKey: HEX_KEY }).save(credentials());
    const error = await new EncryptedFileStore({ path, tokenKey: randomBytes(32).toString('hex') })
      .load()
      .catch((e: unknown) => e as CredentialStoreError);
    expect(error).toBeInstanceOf(CredentialStoreError);
    expect((error as Error).message).toMatch(/RECEIVABLES_TOKEN_KEY/);
    expect((error as CredentialStoreError).code).toBe('AUTH_CREDENTIALS_UNUSABLE');
  });

  it('when a passphrase file is opened with a raw key, then the error says so', async () => {
    await new EncryptedFileStore({ path, tokenKey: 'a passphrase of some length' }).save(credentials());
    await expect(new EncryptedFileStore({ path, tokenKey: HEX_KEY }).load()).rejects.toThrow(/passphrase/);
  });

  it('when no file exists, then load gives null even without a key', async () => {
    expect(await new EncryptedFileStore({ path, tokenKey: undefined }).load()).toBeNull();
  });

  it('when no key is set, then saving fails and says how to make one', async () => {
    await expect(new EncryptedFileStore({ path, tokenKey: undefined }).save(credentials())).rejects.toThrow(
      /openssl rand -base64 32/,
    );
  });

  it('when no key is set, then checkWritable refuses before anything is spent, with the fix', async () => {
    const store = new EncryptedFileStore({ path, tokenKey: undefined });
    await expect(store.checkWritable()).rejects.toThrow(/RECEIVABLES_TOKEN_KEY is not set.*openssl rand/);
  });

  it('when the folder cannot take a file, then checkWritable names it and the fix', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'x');
    const store = new EncryptedFileStore({ path: join(file, 'credentials.enc'), tokenKey: HEX_KEY });
    await expect(store.checkWritable()).rejects.toThrow(
      new RegExp(`cannot store credentials in ${file}: .*(ENOTDIR|EEXIST).*writable folder`),
    );
  });

  it('when the key and the folder are usable, then checkWritable passes and leaves no file behind', async () => {
    const store = new EncryptedFileStore({ path, tokenKey: 'correct horse battery staple' });
    await store.checkWritable();
    expect(await readdir(join(dir, 'nested'))).toEqual([]);
    await store.save(credentials());
    expect(await store.load()).toEqual(credentials());
  });

  it('when the file is not an envelope, then loading fails clearly', async () => {
    await new EncryptedFileStore({ path, tokenKey: HEX_KEY }).save(credentials());
    await writeFile(path, '{"hello":"world"}');
    await expect(new EncryptedFileStore({ path, tokenKey: HEX_KEY }).load()).rejects.toThrow(
      /unknown format/,
    );
  });

  it('when the file is readable by others, then a warning is logged once and the next save makes it 0600', async () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'warn', destination: { write: (line: string) => lines.push(line) } });
    const store = new EncryptedFileStore({ path, tokenKey: HEX_KEY, log });
    await store.save(credentials());
    await chmod(path, 0o644);
    await store.load();
    await store.load();
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40);
    expect(warnings).toEqual([expect.objectContaining({ file: path, mode: '644' })]);
    await store.save(credentials());
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});

describe('parseTokenKey', () => {
  it('when the key is short and not 32 bytes, then it is refused', () => {
    expect(() => parseTokenKey('short')).toThrow(/too short/);
  });
  it('when the key is hex, then it is used as 32 raw bytes', () => {
    const key = parseTokenKey(HEX_KEY);
    expect(key.kind).toBe('raw');
  });
});
