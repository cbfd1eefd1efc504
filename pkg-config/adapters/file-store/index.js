// A spill store on the local filesystem (Node, Deno, Bun): one directory per
// session under a root the host chooses, one file per blob,
// `<root>/<session>/<key>.txt`, so an agent can read a spill with its own
// tools (`sed -n`, `grep -n`) when compress runs with `pointer: 'path'`.
// Paging and search through the store run in the core (core/spill-reader.js).
import '#entry'; // initializes the wasm that read/grep run in
import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { pid } from 'node:process';
import { dirname, resolve, join } from 'node:path';
import { InputError, OptionError, StoreError, describe } from '../../core/errors.js';
import { OutsideSpillStore, corrupt, facts, isContentKey, matchesKey, notFound, refused, verified } from '../../internal/blob-keys.js';
import { checkName } from '../../core/spill-reader.js';
import { TenantStore, integerOption, quotaLimits } from '../../internal/quota.js';
import { EVICTED_PREFIX, EXTENSION, TEMP_PREFIX, TENANT_FILE, UNOWNED, blobKey, isName, ledgerFor, unlessMissing } from './ledger.js';

/** Default time to live of a blob: 7 days after it was last written (as the other stores). */
export const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;
/** Default bytes of all sessions' blobs: 1 GiB. */
export const DEFAULT_MAX_BYTES = 2 ** 30;
/** Default bytes of one session's blobs: 256 MiB. */
export const DEFAULT_MAX_SESSION_BYTES = 2 ** 28;
/** Default bytes of one tenant's blobs (puts through `forTenant`): 256 MiB. */
export const DEFAULT_MAX_TENANT_BYTES = 2 ** 28;
/** Default sessions of one tenant (puts through `forTenant`): 1,000. */
export const DEFAULT_MAX_TENANT_SESSIONS = 1000;
/** A temporary file older than this (seconds) was left by a writer that died: a sweep removes it. */
export const STALE_TEMP_SECONDS = 3600;

/** The quota limits' defaults, by option name. */
const DEFAULTS = {
  maxBytes: DEFAULT_MAX_BYTES,
  maxSessionBytes: DEFAULT_MAX_SESSION_BYTES,
  maxTenantBytes: DEFAULT_MAX_TENANT_BYTES,
  maxTenantSessions: DEFAULT_MAX_TENANT_SESSIONS,
};
/** A session directory is removed by a sweep once empty and unchanged this long (seconds). */
const EMPTY_DIR_GRACE_SECONDS = 60;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
/** Open flags: never follow a symlink in a blob's place, never reuse a file on create. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

function unsafe(path, what) {
  return new StoreError(`${path}: ${what}; the file store refuses to follow or use it`, 'STORE_UNSAFE', 'root');
}

/**
 * A spill store on disk. Directories are created 0700 and files 0600
 * whatever the umask; a blob is written to a temporary file and then given
 * its name (a hard link, which never replaces a file), so a writer killed
 * mid-write never leaves a partial file under a blob's name, and two
 * processes writing one session never see each other's half-written files
 * nor replace each other's blobs. Names come only from checked session names and keys (no `/`, no
 * `..`); a symlink or another kind of file where the store expects its own
 * directory or file is refused (`STORE_UNSAFE`), never followed.
 *
 * The root is created 0700 when missing; an existing root is never
 * chmodded, and is refused (`STORE_UNSAFE`) when its group or others may
 * write it. A blob's file with more than one link is refused on read.
 *
 * A blob expires `ttlSeconds` after it was last written: `get` treats it as
 * missing (and removes it), `sweep()` removes every expired blob, the
 * temporary files of dead writers and empty session directories; the first
 * call on a store sweeps once (`sweepOnOpen`).
 *
 * Limits (a running count, loaded from disk once, see ledger.js; a put
 * reserves its bytes before it writes, so concurrent puts never pass one):
 * `maxSessionBytes` per session and, for puts through `forTenant(t)` (the
 * proxy's, one tenant per client), `maxTenantBytes` and `maxTenantSessions`
 * per tenant: past them the tenant's least recently written other sessions
 * are evicted, and a session alone past its limit is `STORE_REFUSED`. When
 * the whole store would pass `maxBytes`, the least recently written sessions
 * of the tenant holding the most bytes are evicted first (never the session
 * being written): one tenant filling its quota never refuses another's put.
 * The count is shared by the FileStores of one root in a process and by the
 * worker threads of `createThreadedProxy`; separate processes on one root
 * each keep their own (each may use the room the others take).
 */
export class FileStore extends OutsideSpillStore {
  #root;
  #ttl;
  #limits;
  #ledger;
  #now;
  #onTempWritten;
  #opened;
  #sweepOnOpen;

  /**
   * @param options `{ root, ttlSeconds = 7 days (0: none), maxBytes = 1 GiB,
   *   maxSessionBytes = 256 MiB, maxTenantBytes = 256 MiB, maxTenantSessions = 1,000,
   *   sweepOnOpen = true, now = () => Date.now(),
   *   onTempWritten }`: `root` is the directory (created when missing),
   *   `now` the clock in milliseconds, `onTempWritten(tempPath)` is called
   *   after a temporary file is written and before it gets its name (fault injection).
   */
  constructor(options = {}) {
    super();
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new OptionError(`must be an object of FileStore options { root, … }, got ${describe(options)}`, 'INVALID_OPTION', 'options');
    }
    const { root, ttlSeconds, maxBytes, maxSessionBytes, maxTenantBytes, maxTenantSessions, sweepOnOpen = true, now = () => Date.now(), onTempWritten, ...rest } = options;
    for (const k of Object.keys(rest)) {
      throw new OptionError(`unknown FileStore option ${k}`, 'INVALID_OPTION', k);
    }
    if (typeof root !== 'string' || root === '' || root.includes('\0')) {
      throw new OptionError('must be the path of a directory', 'INVALID_OPTION', 'root');
    }
    if (typeof now !== 'function') {
      throw new OptionError(`must be a function returning milliseconds, got ${describe(now)}`, 'INVALID_OPTION', 'now');
    }
    if (onTempWritten !== undefined && typeof onTempWritten !== 'function') {
      throw new OptionError(`must be a function, got ${describe(onTempWritten)}`, 'INVALID_OPTION', 'onTempWritten');
    }
    this.#root = resolve(root);
    this.#ttl = integerOption(ttlSeconds, 'ttlSeconds', DEFAULT_TTL_SECONDS, 0);
    this.#limits = quotaLimits({ maxBytes, maxSessionBytes, maxTenantBytes, maxTenantSessions }, DEFAULTS);
    this.#ledger = ledgerFor(this.#root);
    this.#now = now;
    this.#onTempWritten = onTempWritten;
    this.#opened = undefined;
    this.#sweepOnOpen = Boolean(sweepOnOpen);
  }

  /** The root directory, absolute: `compress(…, { pointer: 'path' })` names files under it. */
  get root() {
    return this.#root;
  }

  /** The file of a blob: `<root>/<session>/<key>.txt` (checked names). */
  pathOf(session, key) {
    return join(this.#root, checkName('session', session), `${checkName('key', key)}${EXTENSION}`);
  }

  /**
   * This store as `tenant` writes it: its puts count against the tenant's
   * `maxTenantBytes` and `maxTenantSessions`, and the sessions it creates
   * are the tenant's (another tenant's put to them is `STORE_REFUSED`).
   * Reads, lists and deletes are the store's own.
   */
  forTenant(tenant) {
    return new TenantFileStore(this, checkName('tenant', tenant));
  }

  /** Creates the root (0700), loads the counts and sweeps once, on the store's first call. */
  #open() {
    this.#opened ??= (async () => {
      await this.#ensureRoot();
      await this.#ledger.call('usage', {});
      if (this.#sweepOnOpen) await this.#sweep();
    })();
    return this.#opened;
  }

  /**
   * The root: created 0700 when missing (whatever the umask); an existing one
   * is used as it is, never chmodded, and refused when its group or others
   * may write it (they could plant or swap what the store reads).
   */
  async #ensureRoot() {
    const created = await fs.mkdir(this.#root, { mode: DIR_MODE, recursive: true });
    const st = await fs.lstat(this.#root);
    if (st.isSymbolicLink()) throw unsafe(this.#root, 'the root is a symlink');
    if (!st.isDirectory()) throw unsafe(this.#root, 'the root is not a directory');
    if (created !== undefined) {
      if ((st.mode & 0o777) !== DIR_MODE) await fs.chmod(this.#root, DIR_MODE);
      return;
    }
    if ((st.mode & 0o022) !== 0) {
      throw unsafe(this.#root, `its group or others may write it (mode ${(st.mode & 0o777).toString(8)}): give the store a directory only its user writes (chmod go-w), or a path that does not exist yet`);
    }
  }

  /** Makes sure `dir` (a session's) is a directory of ours (not a symlink), mode 0700. */
  async #ensureDir(dir) {
    try {
      await fs.mkdir(dir, { mode: DIR_MODE });
    } catch (err) {
      if (err?.code !== 'EEXIST') throw err;
    }
    const st = await fs.lstat(dir);
    if (st.isSymbolicLink()) throw unsafe(dir, 'a symlink stands where the store keeps a directory');
    if (!st.isDirectory()) throw unsafe(dir, 'not a directory');
    if ((st.mode & 0o777) !== DIR_MODE) await fs.chmod(dir, DIR_MODE);
  }

  #seconds() {
    return this.#now() / 1000;
  }

  #expired(mtimeMs) {
    return this.#ttl > 0 && this.#seconds() - mtimeMs / 1000 > this.#ttl;
  }

  /** Opens a blob's file for reading without following a symlink; `undefined` when missing. */
  async #openBlob(path) {
    let handle;
    try {
      handle = await fs.open(path, READ_FLAGS);
    } catch (err) {
      if (err?.code === 'ENOENT') return undefined;
      if (err?.code === 'ELOOP' || err?.code === 'EMLINK') throw unsafe(path, 'a symlink stands in a blob\'s place');
      throw err;
    }
    const st = await handle.stat();
    if (!st.isFile()) {
      await handle.close();
      throw unsafe(path, 'not a regular file');
    }
    if (st.nlink > 1 && !(await this.#publishing(path, st))) {
      await handle.close();
      throw unsafe(path, 'the blob\'s file has another link (a hard link from elsewhere)');
    }
    return { handle, st };
  }

  /**
   * Whether the second link of a blob's file is this store's own temporary
   * file, between a writer's link and its unlink (`#publish`).
   */
  async #publishing(path, st) {
    const dir = dirname(path);
    for (const name of await unlessMissing(() => fs.readdir(dir), [])) {
      if (!name.startsWith(TEMP_PREFIX)) continue;
      const t = await unlessMissing(() => fs.lstat(join(dir, name)));
      if (t?.ino === st.ino && t?.dev === st.dev) return true;
    }
    return false;
  }

  /**
   * Full text of a blob; `SPILL_NOT_FOUND` when missing or expired (an
   * expired file is removed), `SPILL_CORRUPT` when a content key's text does
   * not hash to it, `STORE_UNSAFE` for a symlink in its place.
   */
  async get(session, key) {
    const path = this.pathOf(session, key);
    await this.#open();
    await this.#sessionDir(session, false);
    const opened = await this.#openBlob(path);
    if (!opened) throw notFound(session, key);
    let text;
    try {
      if (this.#expired(opened.st.mtimeMs)) {
        if (await unlessMissing(async () => (await fs.unlink(path), true), false)) {
          await this.#ledger.call('release', { session, bytes: opened.st.size });
        }
        throw notFound(session, key);
      }
      text = await opened.handle.readFile({ encoding: 'utf8' });
    } finally {
      await opened.handle.close();
    }
    return verified(session, key, text);
  }

  /** The session's directory, checked; created when `create`, else `undefined` when missing. */
  async #sessionDir(session, create) {
    const dir = join(this.#root, checkName('session', session));
    if (create) {
      await this.#ensureDir(dir);
      return dir;
    }
    const st = await unlessMissing(() => fs.lstat(dir));
    if (st === undefined) return undefined;
    if (st.isSymbolicLink()) throw unsafe(dir, 'a symlink stands where the store keeps a directory');
    if (!st.isDirectory()) throw unsafe(dir, 'not a directory');
    return dir;
  }

  /**
   * Stores a blob (0600, written to a temporary file, then named). Resolves
   * `true` when written, `false` when the same text was already there (its
   * time to live then starts again). A different text under a held key is
   * `STORE_REFUSED`, and so is a blob that does not fit its limits once
   * evictions made what room they may (`path` names the limit); a content key
   * whose text does not hash to it is `SPILL_CORRUPT`. `tenant`: the tenant
   * whose limits it counts against (`forTenant`).
   */
  async put(session, key, text, { tenant = UNOWNED } = {}) {
    if (typeof text !== 'string') {
      throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
    }
    const path = this.pathOf(session, key);
    if (tenant !== UNOWNED) checkName('tenant', tenant);
    const blob = facts(text);
    if (!matchesKey(key, blob.hash)) throw corrupt(session, key);
    await this.#open();
    // No directory is made before the put is counted: a refused put leaves nothing behind.
    const held = (await this.#sessionDir(session, false)) === undefined ? undefined : await this.#openBlob(path);
    if (held) {
      try {
        // A content key names its text: the same size is the same text (checked on read).
        const same = isContentKey(key)
          ? held.st.size === blob.bytes
          : (await held.handle.readFile({ encoding: 'utf8' })) === text;
        if (!same) throw refused(`${session}/${key}`);
        const now = this.#seconds();
        await held.handle.utimes(now, now);
        await this.#ledger.call('touch', { session, now: this.#now() });
        return false;
      } finally {
        await held.handle.close().catch(() => {});
      }
    }
    const r = await this.#ledger.call('reserve', { session, tenant, bytes: blob.bytes, now: this.#now(), limits: this.#limits });
    await this.#evict(r.evicted);
    if (!r.ok) throw new StoreError(r.message, 'STORE_REFUSED', r.field);
    let written = false;
    try {
      written = await this.#write(session, path, key, text, r.tenant);
      if (written && !(await this.#ledger.call('counts', { session, gen: r.gen }))) {
        // Evicted while it was written (its directory may have been made
        // again for this blob): uncounted, so not kept.
        written = false;
        await unlessMissing(() => fs.unlink(path));
        throw new StoreError(`the session ${session} was evicted while its blob was written`, 'STORE_REFUSED', 'maxBytes');
      }
      return written;
    } finally {
      // Counted once: by this put when it wrote the file, else by whoever did.
      if (!written) await this.#ledger.call('release', { session, bytes: blob.bytes, gen: r.gen });
    }
  }

  /** Writes a counted blob: a temporary file (0600), then its name. Resolves like `put`. */
  async #write(session, path, key, text, tenant) {
    const dir = await this.#sessionDir(session, true);
    if (tenant !== UNOWNED) await this.#markTenant(dir, tenant);
    const temp = join(dir, `${TEMP_PREFIX}${pid}-${randomBytes(8).toString('hex')}${EXTENSION}`);
    const handle = await this.#createTemp(session, temp);
    try {
      await handle.chmod(FILE_MODE);
      await handle.writeFile(text, { encoding: 'utf8' });
      const now = this.#seconds();
      await handle.utimes(now, now);
      await handle.datasync();
    } catch (err) {
      await handle.close().catch(() => {});
      await unlessMissing(() => fs.unlink(temp));
      throw err;
    }
    await handle.close();
    await this.#onTempWritten?.(temp);
    return this.#publish(temp, path, session, key, text);
  }

  /** Names a session's tenant in its directory (`TENANT_FILE`), so the counts loaded later keep it. */
  async #markTenant(dir, tenant) {
    let handle;
    try {
      handle = await fs.open(join(dir, TENANT_FILE), CREATE_FLAGS, FILE_MODE);
    } catch (err) {
      if (err?.code === 'EEXIST') return;
      throw err;
    }
    try {
      await handle.writeFile(tenant, { encoding: 'utf8' });
    } finally {
      await handle.close();
    }
  }

  /**
   * Removes evicted sessions (already out of the counts): each directory is
   * first moved aside whole, so that a writer of the session meanwhile never
   * has its new blob removed with the old ones (it fails, and is not counted).
   */
  async #evict(sessions = []) {
    for (const session of sessions) {
      const trash = join(this.#root, `${EVICTED_PREFIX}${randomBytes(8).toString('hex')}`);
      const moved = await unlessMissing(async () => (await fs.rename(join(this.#root, session), trash), true), false);
      if (moved) await fs.rm(trash, { recursive: true, force: true });
    }
  }

  /**
   * Gives the temporary file its final name without ever replacing a file
   * another process put there meanwhile (a hard link fails when the name is
   * taken; `rename` only where the filesystem has no hard links). Resolves
   * like `put`.
   */
  async #publish(temp, path, session, key, text) {
    try {
      await fs.link(temp, path);
    } catch (err) {
      if (err?.code === 'EEXIST') {
        await unlessMissing(() => fs.unlink(temp));
        // Another writer was first: the same text is stored, another is refused.
        if ((await this.get(session, key)) !== text) throw refused(`${session}/${key}`);
        return false;
      }
      if (!['EPERM', 'ENOTSUP', 'ENOSYS', 'EOPNOTSUPP'].includes(err?.code)) throw err;
      await fs.rename(temp, path);
      return true;
    }
    await unlessMissing(() => fs.unlink(temp));
    return true;
  }

  /**
   * Creates a temporary file (0600, never an existing file or a symlink). A
   * sweep in another process may remove the session's directory while it is
   * empty: it is made again, once.
   */
  async #createTemp(session, temp) {
    try {
      return await fs.open(temp, CREATE_FLAGS, FILE_MODE);
    } catch (err) {
      if (err?.code !== 'ENOENT') throw err;
      await this.#sessionDir(session, true);
      return fs.open(temp, CREATE_FLAGS, FILE_MODE);
    }
  }

  /** Blob files of a session directory: `[{ key, path, bytes, mtimeMs }]` (expired ones included). */
  async #files(dir) {
    const names = await unlessMissing(() => fs.readdir(dir), []);
    const out = [];
    for (const name of names.sort()) {
      const key = blobKey(name);
      if (key === undefined) continue;
      const path = join(dir, name);
      const st = await unlessMissing(() => fs.lstat(path));
      if (st?.isFile()) out.push({ key, path, bytes: st.size, mtimeMs: st.mtimeMs });
    }
    return out;
  }

  /** Blobs of a session that have not expired: `[{ key, bytes, lines }]`. */
  async list(session) {
    await this.#open();
    const dir = await this.#sessionDir(session, false);
    if (dir === undefined) return [];
    const out = [];
    for (const f of await this.#files(dir)) {
      if (this.#expired(f.mtimeMs)) continue;
      const opened = await this.#openBlob(f.path);
      if (!opened) continue;
      try {
        const text = await opened.handle.readFile({ encoding: 'utf8' });
        out.push({ key: f.key, bytes: f.bytes, lines: facts(text).lines });
      } finally {
        await opened.handle.close();
      }
    }
    return out;
  }

  /** Removes a blob; resolves whether it existed. */
  async delete(session, key) {
    const path = this.pathOf(session, key);
    await this.#open();
    if ((await this.#sessionDir(session, false)) === undefined) return false;
    const st = await unlessMissing(() => fs.lstat(path));
    if (!st?.isFile()) return false;
    const gone = await unlessMissing(async () => (await fs.unlink(path), true), false);
    if (gone) await this.#ledger.call('release', { session, bytes: st.size });
    return gone;
  }

  /** Session directories under the root (symlinks and other files are skipped). */
  async #sessions() {
    const entries = await unlessMissing(() => fs.readdir(this.#root, { withFileTypes: true }), []);
    return entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .filter(isName)
      .sort();
  }

  /**
   * The running counts the limits see: `{ totalBytes, sessions: [{ session,
   * tenant, bytes, blobs }], tenants: [{ tenant, bytes, sessions }] }` (a
   * blob past its time to live counts until a read or a sweep removes it;
   * `tenant` is `''` for sessions written without one).
   */
  async usage() {
    await this.#open();
    return this.#ledger.call('usage', {});
  }

  /**
   * Removes the blobs past their time to live, the temporary files of
   * writers that died over `STALE_TEMP_SECONDS` ago and the session
   * directories empty for over a minute. Resolves `{ blobs, bytes, temps, sessions }` removed.
   */
  async sweep() {
    await this.#open();
    return this.#sweep();
  }

  async #sweep() {
    const removed = { blobs: 0, bytes: 0, temps: 0, sessions: 0 };
    const now = this.#seconds();
    for (const session of await this.#sessions()) {
      const dir = join(this.#root, session);
      for (const f of await this.#files(dir)) {
        if (!this.#expired(f.mtimeMs)) continue;
        if (await unlessMissing(async () => (await fs.unlink(f.path), true), false)) {
          removed.blobs++;
          removed.bytes += f.bytes;
          await this.#ledger.call('release', { session, bytes: f.bytes });
        }
      }
      let names = await unlessMissing(() => fs.readdir(dir), []);
      for (const name of names.filter((n) => n.startsWith(TEMP_PREFIX))) {
        const path = join(dir, name);
        const st = await unlessMissing(() => fs.lstat(path));
        if (st && now - st.mtimeMs / 1000 > STALE_TEMP_SECONDS && (await unlessMissing(async () => (await fs.unlink(path), true), false))) {
          removed.temps++;
        }
      }
      // A directory made just now may be about to receive a writer's file.
      const st = await unlessMissing(() => fs.lstat(dir));
      if (!st || now - st.mtimeMs / 1000 <= EMPTY_DIR_GRACE_SECONDS) continue;
      names = await unlessMissing(() => fs.readdir(dir), []);
      if (names.length === 1 && names[0] === TENANT_FILE) await unlessMissing(() => fs.unlink(join(dir, TENANT_FILE)));
      try {
        await fs.rmdir(dir);
        removed.sessions++;
        await this.#ledger.call('forget', { session });
      } catch (err) {
        if (err?.code !== 'ENOTEMPTY' && err?.code !== 'EEXIST' && err?.code !== 'ENOENT') throw err;
      }
    }
    // Evictions a writer that died left part way.
    for (const name of await unlessMissing(() => fs.readdir(this.#root), [])) {
      if (name.startsWith(EVICTED_PREFIX)) await fs.rm(join(this.#root, name), { recursive: true, force: true });
    }
    return removed;
  }
}

/**
 * A FileStore as one tenant writes it (`FileStore#forTenant`): a tenant
 * view that also names the files of its blobs.
 */
class TenantFileStore extends TenantStore {
  #files;

  constructor(store, tenant) {
    super(store, tenant);
    this.#files = store;
  }

  get root() {
    return this.#files.root;
  }

  pathOf(session, key) {
    return this.#files.pathOf(session, key);
  }
}
