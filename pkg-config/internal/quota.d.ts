// Types shared by the stores that keep quotas (FileStore, RedisStore): their
// limit options. Each store's defaults are its own `DEFAULT_MAX_*` exports.

/** The quota options of a store (`FileStoreOptions`, `RedisStoreOptions`): each an integer, `INVALID_OPTION` otherwise. */
export interface QuotaOptions {
  /**
   * Bytes of all sessions' blobs; past them the least recently written sessions of the tenant
   * holding the most bytes are evicted (never the session written). Default `DEFAULT_MAX_BYTES`.
   */
  maxBytes?: number;
  /** Bytes of one session's blobs; past them a put is `STORE_REFUSED`. Default `DEFAULT_MAX_SESSION_BYTES`. */
  maxSessionBytes?: number;
  /**
   * Bytes of one tenant's blobs (puts through `forTenant`); past them its least recently written
   * other sessions are evicted. Default `DEFAULT_MAX_TENANT_BYTES`.
   */
  maxTenantBytes?: number;
  /**
   * Sessions of one tenant (puts through `forTenant`), at least 1; past them its least recently
   * written session is evicted. Default `DEFAULT_MAX_TENANT_SESSIONS`.
   */
  maxTenantSessions?: number;
}
