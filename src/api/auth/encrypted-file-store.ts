import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../logging/logger.js';
import { CredentialStoreError } from './auth-errors.js';
import { CredentialCipher } from './credential-cipher.js';
import { type CredentialStore, parseStoredCredentials, type StoredCredentials } from './token-storage.js';

export interface EncryptedFileStoreProps {
  /** The credentials file, by default `${state.dataDir}/credentials.enc`. */
  path: string;
  /** `RECEIVABLES_TOKEN_KEY`: 32 bytes as hex/base64, or a passphrase (see credential-cipher.ts). */
  tokenKey: string | undefined;
  log?: Logger;
}

/**
 * Credentials in one AES-256-GCM-encrypted file, mode 0600 in a 0700 folder. Writes go to a
 * temporary file in the same folder, are flushed, then renamed over the old file: a reader (another
 * process) sees the old record or the new one, never half of one.
 */
export class EncryptedFileStore implements CredentialStore {
  readonly location: string;
  readonly #tokenKey: string | undefined;
  #cipherInstance: CredentialCipher | undefined;
  readonly #log: Logger | undefined;
  #warnedMode = false;

  constructor(props: EncryptedFileStoreProps) {
    this.location = props.path;
    this.#tokenKey = props.tokenKey;
    this.#log = props.log;
  }

  async load(): Promise<StoredCredentials | null> {
    let text: string;
    try {
      text = await readFile(this.location, 'utf8');
    } catch (error) {
      // Nothing stored: no file, or a path through a file (a save says what is wrong with it).
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw new CredentialStoreError(`cannot read ${this.location}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    await this.#checkMode();
    let envelope: unknown;
    try {
      envelope = JSON.parse(text);
    } catch (cause) {
      throw new CredentialStoreError(
        `${this.location} is not a receivables-sync credentials file (not JSON)`,
        {
          cause,
        },
      );
    }
    const plaintext = await this.#cipher.open(envelope, this.location);
    const credentials = parseStoredCredentials(JSON.parse(plaintext.toString('utf8')));
    if (!credentials)
      throw new CredentialStoreError(`${this.location} holds an incomplete credentials record`);
    return credentials;
  }

  async save(credentials: StoredCredentials): Promise<void> {
    const envelope = await this.#cipher.seal(Buffer.from(JSON.stringify(credentials), 'utf8'));
    const tmp = await this.#writeSibling(
      'tmp',
      `${JSON.stringify(envelope)}\n`,
      (error) =>
        new CredentialStoreError(`cannot write ${this.location}: ${error.message}`, { cause: error }),
    );
    try {
      await rename(tmp, this.location);
    } catch (error) {
      await rm(tmp, { force: true }).catch(() => {});
      throw new CredentialStoreError(`cannot write ${this.location}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  async checkWritable(): Promise<void> {
    // The key first: a missing or short RECEIVABLES_TOKEN_KEY is the usual first mistake.
    await this.#cipher.seal(Buffer.from('probe'));
    const dir = dirname(this.location);
    const probe = await this.#writeSibling(
      'probe',
      'probe\n',
      (error) =>
        new CredentialStoreError(
          `cannot store credentials in ${dir}: ${error.message}; make it a writable folder (state.dataDir), with free space`,
          { cause: error },
        ),
    );
    await rm(probe, { force: true });
  }

  /**
   * A new file beside the credentials (0600, in a 0700 folder made if missing), written and
   * flushed; its path. On failure nothing is left and `failure` says why.
   */
  async #writeSibling(
    suffix: string,
    text: string,
    failure: (error: Error) => CredentialStoreError,
  ): Promise<string> {
    const path = `${this.location}.${process.pid}.${randomBytes(6).toString('hex')}.${suffix}`;
    try {
      await mkdir(dirname(this.location), { recursive: true, mode: 0o700 });
      const handle = await open(path, 'wx', 0o600);
      try {
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      // The umask may have narrowed the mode further, never widened it; make it exact anyway.
      await chmod(path, 0o600);
      return path;
    } catch (error) {
      await rm(path, { force: true }).catch(() => {});
      throw failure(error as Error);
    }
  }

  /** Made on first use: without a file, `load` needs no key (and reports "nothing stored"). */
  get #cipher(): CredentialCipher {
    this.#cipherInstance ??= new CredentialCipher(this.#tokenKey);
    return this.#cipherInstance;
  }

  /** Warns once when the file is readable by the group or others (it is encrypted, but still). */
  async #checkMode(): Promise<void> {
    if (this.#warnedMode || process.platform === 'win32') return;
    const { mode } = await stat(this.location);
    if ((mode & 0o077) !== 0) {
      this.#warnedMode = true;
      this.#log?.warn(
        { file: this.location, mode: (mode & 0o777).toString(8) },
        'credentials file is readable by other users; run chmod 600 on it (the next save fixes it)',
      );
    }
  }
}
