"""Server-side Lua scripts of the Redis/Valkey backend (plain EVAL: Redis ≥ 5, Valkey; standalone, not Cluster).

WRITE_CYCLE applies one collection cycle atomically. It reads and checks every series first and writes only
when all are sound, so an error (a key of the wrong type, a corrupt first_seen) leaves nothing behind; the cycle
marker (`SET … EX` after an EXISTS check, both inside the script) makes a retried cycle a no-op — apart from
refreshing the marker's TTL: a replicated write, so a WAIT sent after a retry on a new connection waits for the
original write's replication too.

    KEYS[1]   the cycle marker (keys.cycle_key)
    KEYS[2..] one value list per series (keys.values_key); `:ts` and `:first_seen` are derived from it
    ARGV[1]   marker TTL (s)      ARGV[2] cycle time (epoch ms)   ARGV[3] cycle time (epoch s)
    ARGV[4]   retention cutoff (epoch ms) or ''                   ARGV[5] reservoir size
    ARGV[6..] per series, in KEYS order: the number of values n, then the n values
    returns   1 when applied, 0 when the marker existed (already applied)

The first_seen rule is window.next_first_seen; values without a time (written by the Go operator) sit at the
oldest end of the list and are dated at first_seen.

READ_SERIES returns, per key: the values joined by spaces, first_seen (or nil), and the times joined by spaces
when ARGV[1] is '1' (else nil). One string per list keeps the client from parsing one RESP element per sample.
"""

from __future__ import annotations

from .keys import GROUP_MARKERS

WRITE_CYCLE = r"""
local marker = KEYS[1]
if redis.call('EXISTS', marker) == 1 then
  -- a replicated write, so that a WAIT after this retry also covers the original write
  redis.call('EXPIRE', marker, ARGV[1])
  return 0
end
local at_ms, at_s, cutoff_arg = ARGV[2], ARGV[3], ARGV[4]
local reservoir = tonumber(ARGV[5])
local cutoff = false
if cutoff_arg ~= '' then
  cutoff = tonumber(cutoff_arg)
end
local CHUNK = 1000

local plans = {}
local arg = 6
for i = 2, #KEYS do
  local key = KEYS[i]
  local tkey, fkey = key .. ':ts', key .. ':first_seen'
  local nv = redis.pcall('LLEN', key)
  if type(nv) == 'table' then return redis.error_reply(key .. ': ' .. nv.err) end
  local nt = redis.pcall('LLEN', tkey)
  if type(nt) == 'table' then return redis.error_reply(tkey .. ': ' .. nt.err) end
  local fs_raw = redis.pcall('GET', fkey)
  if type(fs_raw) == 'table' then return redis.error_reply(fkey .. ': ' .. fs_raw.err) end
  local fs = false
  if fs_raw then
    fs = tonumber(fs_raw)
    if not fs then return redis.error_reply(fkey .. ' holds "' .. fs_raw .. '", not epoch milliseconds') end
  end
  local surplus = 0
  if nt > nv then
    surplus = nt - nv
    nt = nv
  end
  local undated = nv - nt
  local drop, drop_times = 0, 0
  if cutoff and (undated == 0 or (fs or 0) < cutoff) then
    drop = undated
    if nt > 0 then
      local newest = tonumber(redis.call('LINDEX', tkey, -1))
      if not newest then return redis.error_reply(tkey .. ' holds a time that is not epoch seconds') end
      if newest * 1000 < cutoff then
        drop_times = nt
      else
        while true do
          local t = tonumber(redis.call('LINDEX', tkey, surplus + drop_times))
          if not t then return redis.error_reply(tkey .. ' holds a time that is not epoch seconds') end
          if t * 1000 >= cutoff then break end
          drop_times = drop_times + 1
        end
      end
    end
    drop = drop + drop_times
  end
  local kept = nv - drop
  local new_fs = false
  if cutoff then
    if not (fs and fs >= cutoff) then
      if kept == 0 then new_fs = at_ms else new_fs = cutoff_arg end
    end
  elseif not fs then
    new_fs = at_ms
  end
  local count = tonumber(ARGV[arg])
  plans[#plans + 1] = {key, tkey, fkey, drop, surplus + drop_times, new_fs, arg + 1, arg + count, kept + count}
  arg = arg + 1 + count
end

redis.call('SET', marker, at_ms, 'EX', ARGV[1])
local stamps = {}
for _, p in ipairs(plans) do
  local key, tkey, fkey, drop, drop_t, new_fs, first, last, total = unpack(p)
  if drop > 0 then redis.call('LTRIM', key, drop, -1) end
  if drop_t > 0 then redis.call('LTRIM', tkey, drop_t, -1) end
  if new_fs then redis.call('SET', fkey, new_fs) end
  local j = first
  while j <= last do
    local k = math.min(j + CHUNK - 1, last)
    local n = k - j + 1
    for s = #stamps + 1, n do stamps[s] = at_s end
    redis.call('RPUSH', key, unpack(ARGV, j, k))
    redis.call('RPUSH', tkey, unpack(stamps, 1, n))
    j = k + 1
  end
  if total > reservoir then
    redis.call('LTRIM', key, -reservoir, -1)
    redis.call('LTRIM', tkey, -reservoir, -1)
  end
end
return 1
"""

READ_SERIES = r"""
local with_times = ARGV[1] == '1'
local out = {}
for i, key in ipairs(KEYS) do
  local values = redis.pcall('LRANGE', key, 0, -1)
  if values.err then return redis.error_reply(key .. ': ' .. values.err) end
  local fs = redis.pcall('GET', key .. ':first_seen')
  if type(fs) == 'table' then return redis.error_reply(key .. ':first_seen: ' .. fs.err) end
  local times = false
  if with_times then
    local t = redis.pcall('LRANGE', key .. ':ts', 0, -1)
    if t.err then return redis.error_reply(key .. ':ts: ' .. t.err) end
    times = table.concat(t, ' ')
  end
  out[i] = {table.concat(values, ' '), fs, times}
end
return out
"""


def _derive(script: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        if script.count(old) != 1:  # pragma: no cover - a guard for whoever edits WRITE_CYCLE
            raise AssertionError(f"WRITE_CYCLE must contain {old!r} exactly once")
        script = script.replace(old, new)
    return script


WRITE_GROUP = _derive(
    WRITE_CYCLE,
    {
        "if redis.call('EXISTS', marker) == 1 then": "if redis.call('LPOS', marker, ARGV[6]) then",
        "local arg = 6": "local arg = 7",
        # KEYS: the marker, the n value lists, then each one's `:ts` and `:first_seen` (declared, so that Redis
        # answers ASK/TRYAGAIN for a slot in migration before the script runs)
        "for i = 2, #KEYS do": "for i = 2, (#KEYS - 1) / 3 + 1 do",
        "redis.call('SET', marker, at_ms, 'EX', ARGV[1])": (
            "redis.call('LPUSH', marker, ARGV[6])\n"
            f"redis.call('LTRIM', marker, 0, {GROUP_MARKERS - 1})\n"
            "redis.call('EXPIRE', marker, ARGV[1])"
        ),
    },
)
"""WRITE_CYCLE for one bucket's series in Cluster mode (all keys in one slot, docs/design.md, differences 68, 76).

    KEYS[1]   the bucket's marker list (keys.group_marker_key): its last GROUP_MARKERS cycle ids
    KEYS[2..] the n value lists, then per list its `:ts` and `:first_seen` (derived in the script, but declared)
    ARGV[6]   the cycle id; the series follow from ARGV[7], as from ARGV[6] in WRITE_CYCLE
"""

READ_GROUP = _derive(READ_SERIES, {"for i, key in ipairs(KEYS) do": "for i = 1, #KEYS / 3 do\n  local key = KEYS[i]"})
"""READ_SERIES in Cluster mode: KEYS are the n value lists, then per list its `:ts` and `:first_seen`."""

IMPORT_GROUP = r"""
local n = #KEYS / 3
for i = 1, n do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
local arg = 1
local CHUNK = 1000
for i = 1, n do
  local key, tkey, fkey = KEYS[i], KEYS[n + 2 * i - 1], KEYS[n + 2 * i]
  local count = tonumber(ARGV[arg])
  local first, last = arg + 1, arg + count
  local j = first
  while j <= last do
    local k = math.min(j + CHUNK - 1, last)
    redis.call('RPUSH', key, unpack(ARGV, j, k))
    redis.call('RPUSH', tkey, unpack(ARGV, j + count, k + count))
    j = k + 1
  end
  arg = last + count + 1
  if ARGV[arg] ~= '' then redis.call('SET', fkey, ARGV[arg]) end
  arg = arg + 1
end
return 1
"""
"""Copies one profile's history into the Cluster layout unless any of its series is there already (so a copy
run again, or resumed, never doubles nor overwrites a series the collector has written since).

    KEYS      the n value lists, then per list its `:ts` and `:first_seen` (as READ_GROUP)
    ARGV      per series: the number of values c, the c values, the c times (epoch s), first_seen or ''
    returns   1 when copied, 0 when skipped
"""
