// Internal (RedisStore): the Lua scripts every store operation is, so that a
// put checks the limits, evicts and writes in one atomic step on the server
// (the FileStore's ledger.js, kept in Redis: every process and host sees one
// count). Each script gets the store's prefix as ARGV[1] and one declared key
// (`<prefix>total`, which routes it in a cluster: give the prefix a hash tag).
//
// Keys under the prefix P (session names, keys and tenants are
// [A-Za-z0-9._-], so `:` separates them unambiguously):
//   P b:<session>:<key>  string: a blob's text (PX: its time to live)
//   P m:<session>        hash: key → "<bytes> <lines> <expires ms, 0: never>"
//   P owner              hash: session → tenant ('' when written without one)
//   P sbytes, P sblobs   hash: session → bytes, blobs
//   P touched            zset: session → last write (ms), all sessions
//   P t:<tenant>         zset: session → last write, the tenant's sessions
//   P tbytes             zset: tenant → bytes
//   P total              string: bytes of all sessions

const PRELUDE = `
local P = ARGV[1]
local TOTAL, TOUCHED, SBYTES, SBLOBS, OWNER, TBYTES = P..'total', P..'touched', P..'sbytes', P..'sblobs', P..'owner', P..'tbytes'
local function metaKey(s) return P..'m:'..s end
local function blobKey(s, k) return P..'b:'..s..':'..k end
local function tenantKey(t) return P..'t:'..t end
local function int(x) return string.format('%.0f', x) end
local function num(x) return tonumber(x or '0') or 0 end

local function parse(field)
  local b, l, e = string.match(field, '^(%d+) (%d+) (%d+)$')
  return tonumber(b), tonumber(l), tonumber(e)
end

local function add(s, tenant, bytes, blobs)
  redis.call('HINCRBY', SBYTES, s, bytes)
  redis.call('HINCRBY', SBLOBS, s, blobs)
  redis.call('ZINCRBY', TBYTES, bytes, tenant)
  if redis.call('INCRBY', TOTAL, bytes) == 0 then redis.call('DEL', TOTAL) end
end

-- Takes a session out of the counts and removes its blobs; returns { bytes, blobs }.
-- \`hint\`: the tenant whose set it was found in (kept in step even if its owner record is gone).
local function forget(s, hint)
  if not s then return 0, 0 end
  local tenant = redis.call('HGET', OWNER, s) or hint
  if not tenant then
    redis.call('ZREM', TOUCHED, s)
    return 0, 0
  end
  local bytes, blobs = num(redis.call('HGET', SBYTES, s)), num(redis.call('HGET', SBLOBS, s))
  local keys = redis.call('HKEYS', metaKey(s))
  for i = 1, #keys, 256 do
    local batch = {}
    for j = i, math.min(i + 255, #keys) do batch[#batch + 1] = blobKey(s, keys[j]) end
    redis.call('UNLINK', unpack(batch))
  end
  redis.call('DEL', metaKey(s))
  redis.call('HDEL', SBYTES, s)
  redis.call('HDEL', SBLOBS, s)
  redis.call('HDEL', OWNER, s)
  redis.call('ZREM', TOUCHED, s)
  redis.call('ZREM', tenantKey(tenant), s)
  if redis.call('EXISTS', tenantKey(tenant)) == 0 then
    redis.call('ZREM', TBYTES, tenant)
  else
    redis.call('ZINCRBY', TBYTES, -bytes, tenant)
  end
  if redis.call('DECRBY', TOTAL, bytes) == 0 then redis.call('DEL', TOTAL) end
  return bytes, blobs
end

-- Removes one blob (expired, gone, deleted) and gives back its bytes; a session left without blobs is forgotten.
local function dropBlob(s, k, bytes)
  redis.call('UNLINK', blobKey(s, k))
  if redis.call('HDEL', metaKey(s), k) == 0 then return end
  local tenant = redis.call('HGET', OWNER, s)
  if not tenant then return end
  add(s, tenant, -bytes, -1)
  if num(redis.call('HGET', SBLOBS, s)) <= 0 then forget(s) end
end

-- Sessions whose last write is over ttl ago (every blob of theirs expired): at most limit of them.
local function expireSessions(now, ttl, limit)
  if ttl <= 0 then return 0, 0, 0 end
  local old = redis.call('ZRANGEBYSCORE', TOUCHED, '-inf', '(' .. int(now - ttl), 'LIMIT', 0, limit)
  local bytes, blobs = 0, 0
  for _, s in ipairs(old) do
    local b, n = forget(s)
    bytes, blobs = bytes + b, blobs + n
  end
  return #old, bytes, blobs
end

-- The blobs of one session past their time to live.
local function expireBlobs(s, now)
  local all = redis.call('HGETALL', metaKey(s))
  local bytes, blobs = 0, 0
  for i = 1, #all, 2 do
    local b, _, e = parse(all[i + 1])
    if e > 0 and now > e then
      dropBlob(s, all[i], b)
      bytes, blobs = bytes + b, blobs + 1
    end
  end
  return bytes, blobs
end

local function touch(s, tenant, now)
  redis.call('ZADD', TOUCHED, 'GT', now, s)
  redis.call('ZADD', tenantKey(tenant), 'GT', now, s)
end
`;

/** `get`: ARGV prefix, session, key, now → the text, or nil (missing, expired: then removed). */
const GET = `
local s, k, now = ARGV[2], ARGV[3], tonumber(ARGV[4])
local field = redis.call('HGET', metaKey(s), k)
if not field then return false end
local b, _, e = parse(field)
if e > 0 and now > e then dropBlob(s, k, b) return false end
local text = redis.call('GET', blobKey(s, k))
-- Gone behind the counts' back (Redis' own eviction or expiry): counted out.
if not text then dropBlob(s, k, b) return false end
return text
`;

/**
 * \`put\`: ARGV prefix, session, key, tenant, text, lines, now, ttl ms (0:
 * never), maxBytes, maxSessionBytes, maxTenantBytes, maxTenantSessions,
 * expiry batch → { 'written', evicted } | { 'same' } | { 'refused', field, message, evicted }.
 * The semantics of ledger.js's reserve (FileStore), checked, evicted and written at once.
 */
const PUT = `
local s, k, tenant, text, lines = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local now, ttl = tonumber(ARGV[7]), tonumber(ARGV[8])
local maxBytes, maxSession, maxTenantBytes, maxTenantSessions = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local bytes = string.len(text)
local expires = 0
if ttl > 0 then expires = now + ttl end
expireSessions(now, ttl, tonumber(ARGV[13]))
local meta, blob = metaKey(s), blobKey(s, k)

local function keep()
  if ttl > 0 then
    redis.call('PEXPIRE', blob, ttl)
    if redis.call('PTTL', meta) < ttl then redis.call('PEXPIRE', meta, ttl) end
  end
end

local field = redis.call('HGET', meta, k)
if field then
  local b, l, e = parse(field)
  local held = redis.call('GET', blob)
  if (e > 0 and now > e) or not held then
    dropBlob(s, k, b)
  elseif held ~= text then
    return { 'refused', 'key', s .. '/' .. k .. ': another text is already stored under this key', 0 }
  else
    -- The same text: its time to live starts again, its session counts as written now.
    redis.call('HSET', meta, k, int(b) .. ' ' .. int(l) .. ' ' .. int(expires))
    keep()
    touch(s, redis.call('HGET', OWNER, s) or tenant, now)
    return { 'same' }
  end
end

local owner = redis.call('HGET', OWNER, s)
if owner and owner ~= tenant and tenant ~= '' then
  if owner ~= '' then return { 'refused', 'session', 'the session belongs to another tenant', 0 } end
  -- A session written without a tenant goes to its next tenant writer.
  local held = num(redis.call('HGET', SBYTES, s))
  local score = redis.call('ZSCORE', tenantKey(''), s) or int(now)
  redis.call('ZREM', tenantKey(''), s)
  if redis.call('EXISTS', tenantKey('')) == 0 then redis.call('ZREM', TBYTES, '') else redis.call('ZINCRBY', TBYTES, -held, '') end
  redis.call('ZADD', tenantKey(tenant), score, s)
  redis.call('ZINCRBY', TBYTES, held, tenant)
  redis.call('HSET', OWNER, s, tenant)
  owner = tenant
end

local held = num(redis.call('HGET', SBYTES, s))
if held + bytes > maxSession then
  return { 'refused', 'maxSessionBytes', "the session's spill quota is full (" .. int(held) .. ' bytes held + ' .. int(bytes) .. ' new > maxSessionBytes ' .. int(maxSession) .. ')', 0 }
end
if held + bytes > maxBytes then
  return { 'refused', 'maxBytes', 'the blob does not fit the store (' .. int(held) .. ' bytes held + ' .. int(bytes) .. ' new > maxBytes ' .. int(maxBytes) .. ')', 0 }
end
if tenant ~= '' and held + bytes > maxTenantBytes then
  return { 'refused', 'maxTenantBytes', "the blob does not fit the tenant's quota (" .. int(held) .. ' bytes held + ' .. int(bytes) .. ' new > maxTenantBytes ' .. int(maxTenantBytes) .. ')', 0 }
end

-- The least recently written session of a tenant other than the one written (ties by name).
local function oldest(t)
  for _, name in ipairs(redis.call('ZRANGE', tenantKey(t), 0, 1)) do
    if name ~= s then return name end
  end
  return nil
end

-- The tenant holding the most bytes in sessions other than the one written (ties by name).
local function fullest()
  local top = redis.call('ZREVRANGE', TBYTES, 0, 1, 'WITHSCORES')
  local best, most
  for i = 1, #top, 2 do
    local name, b = top[i], tonumber(top[i + 1])
    if name == owner then b = b - held end
    if b > 0 and (best == nil or b > most or (b == most and name < best)) then best, most = name, b end
  end
  return best
end

local evicted = 0
if tenant ~= '' then
  if not owner then
    while redis.call('ZCARD', tenantKey(tenant)) >= maxTenantSessions do
      local o = oldest(tenant)
      if not o then break end
      forget(o, tenant)
      evicted = evicted + 1
    end
  end
  while num(redis.call('ZSCORE', TBYTES, tenant)) + bytes > maxTenantBytes do
    local o = oldest(tenant)
    if not o then
      return { 'refused', 'maxTenantBytes', "the tenant's spill quota is full (" .. int(num(redis.call('ZSCORE', TBYTES, tenant))) .. ' bytes held + ' .. int(bytes) .. ' new > maxTenantBytes ' .. int(maxTenantBytes) .. ')', evicted }
    end
    forget(o, tenant)
    evicted = evicted + 1
  end
end
while num(redis.call('GET', TOTAL)) + bytes > maxBytes do
  local f = fullest()
  if not f then
    return { 'refused', 'maxBytes', 'the store is full (' .. int(num(redis.call('GET', TOTAL))) .. ' bytes held + ' .. int(bytes) .. ' new > maxBytes ' .. int(maxBytes) .. ')', evicted }
  end
  local o = oldest(f)
  if o then
    forget(o, f)
    evicted = evicted + 1
  else
    -- Bytes counted for a tenant without sessions (never written so): dropped, so that the loop ends.
    redis.call('ZREM', TBYTES, f)
  end
end

if not owner then
  owner = tenant
  redis.call('HSET', OWNER, s, owner)
end
redis.call('SET', blob, text)
redis.call('HSET', meta, k, int(bytes) .. ' ' .. lines .. ' ' .. int(expires))
keep()
add(s, owner, bytes, 1)
touch(s, owner, now)
return { 'written', evicted }
`;

/** `list`: ARGV prefix, session, now → { key, bytes, lines, … } of the blobs not expired. */
const LIST = `
local s, now = ARGV[2], tonumber(ARGV[3])
local all = redis.call('HGETALL', metaKey(s))
local out = {}
for i = 1, #all, 2 do
  local b, l, e = parse(all[i + 1])
  if e == 0 or now <= e then
    out[#out + 1] = all[i]
    out[#out + 1] = b
    out[#out + 1] = l
  end
end
return out
`;

/** `delete`: ARGV prefix, session, key → 1 when it was held, else 0. */
const DELETE = `
local s, k = ARGV[2], ARGV[3]
local field = redis.call('HGET', metaKey(s), k)
if not field then return 0 end
local b = parse(field)
dropBlob(s, k, b)
return 1
`;

/** `usage`: ARGV prefix → { total, { session, tenant, bytes, blobs, … }, { tenant, bytes, sessions, … } }. */
const USAGE = `
local sessions = {}
local owners = redis.call('HGETALL', OWNER)
for i = 1, #owners, 2 do
  local s = owners[i]
  sessions[#sessions + 1] = s
  sessions[#sessions + 1] = owners[i + 1]
  sessions[#sessions + 1] = num(redis.call('HGET', SBYTES, s))
  sessions[#sessions + 1] = num(redis.call('HGET', SBLOBS, s))
end
local tenants = {}
local t = redis.call('ZRANGE', TBYTES, 0, -1, 'WITHSCORES')
for i = 1, #t, 2 do
  tenants[#tenants + 1] = t[i]
  tenants[#tenants + 1] = tonumber(t[i + 1])
  tenants[#tenants + 1] = redis.call('ZCARD', tenantKey(t[i]))
end
return { num(redis.call('GET', TOTAL)), sessions, tenants }
`;

/**
 * `sweep`: ARGV prefix, now, ttl ms, cursor, count → { next cursor, blobs,
 * bytes, sessions } removed from one HSCAN page of the sessions.
 */
const SWEEP = `
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local page = redis.call('HSCAN', OWNER, ARGV[4], 'COUNT', ARGV[5])
local bytes, blobs, sessions = 0, 0, 0
for i = 1, #page[2], 2 do
  local s = page[2][i]
  local touched = tonumber(redis.call('ZSCORE', TOUCHED, s) or '0')
  if ttl > 0 and now - touched > ttl then
    local b, n = forget(s)
    bytes, blobs, sessions = bytes + b, blobs + n, sessions + 1
  else
    local b, n = expireBlobs(s, now)
    bytes, blobs = bytes + b, blobs + n
    if n > 0 and not redis.call('HGET', OWNER, s) then sessions = sessions + 1 end
  end
end
return { page[1], blobs, bytes, sessions }
`;

/** The scripts by operation, each with the shared functions before it. */
export const SCRIPTS = Object.freeze(Object.fromEntries(
  Object.entries({ get: GET, put: PUT, list: LIST, delete: DELETE, usage: USAGE, sweep: SWEEP })
    .map(([name, body]) => [name, `-- tracelite redis-store: ${name}${PRELUDE}${body}`]),
));
