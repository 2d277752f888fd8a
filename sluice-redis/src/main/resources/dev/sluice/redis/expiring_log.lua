-- The log of (expiresAt, weight) entries shared by SLIDING_LOG and SLIDING_WINDOW_COUNTER
-- (dev.sluice.algorithm.ExpiringLogState): an entry counts while now < expiresAt; requests with the same expiry
-- share one entry.
--
-- One hash: h = index of the oldest entry, n = index after the newest, b = the cumulative weight before entry h;
-- field i (h <= i < n) = "expiresAt:cumulative weight through entry i". Cumulative weights make the total one
-- subtraction and "when will enough have expired" a binary search, so a denial costs O(log entries), not
-- O(entries). Entries are pruned from the head, appended at (or merged into) the tail.
local function expiringLog(p, expiryOf)
  local key, mode, now, L, W, cost = p.key, p.mode, p.now, p.L, p.W, p.cost
  local countRejected, place, consume = p.countRejected, p.place, p.consume
  local s = redis.call('HMGET', key, 'h', 'n', 'b')
  local h = tonumber(s[1]) or 0
  local n = tonumber(s[2]) or 0
  local b = tonumber(s[3]) or 0
  local writes = mode ~= 'p'
  local dirty = false

  local function entry(i)
    local e, c = string.match(redis.call('HGET', key, i), '^(-?%d+):(%d+)$')
    return tonumber(e), tonumber(c)
  end

  local function put(i, e, c)
    redis.call('HSET', key, i, string.format('%d:%d', e, c))
  end

  -- drop the entries that have expired
  while h < n do
    local e, c = entry(h)
    if e > now then
      break
    end
    if writes then
      redis.call('HDEL', key, h)
    end
    b = c
    h = h + 1
    dirty = true
  end
  if h == n then
    h, n, b = 0, 0, 0
  end

  local eNew, cNew = nil, b  -- the newest entry
  if h < n then
    eNew, cNew = entry(n - 1)
  end
  local total = cNew - b

  -- writes the head, the tail and the base, and a TTL until the newest entry expires; deletes an empty log
  local function finish()
    if not (writes and dirty) then
      return
    end
    if h == n then
      redis.call('DEL', key)
      return
    end
    redis.call('HSET', key, 'h', h, 'n', n, 'b', b)
    redis.call('PEXPIRE', key, ttl(p, eNew))
  end

  if mode == 'g' then
    local back = 0
    if place > now then
      local lo, hi = h, n - 1
      local found = nil
      while lo <= hi do
        local mid = math.floor((lo + hi) / 2)
        local e = entry(mid)
        if e < place then
          lo = mid + 1
        elseif e > place then
          hi = mid - 1
        else
          found = mid
          break
        end
      end
      if found ~= nil then
        local _, c = entry(found)
        local before = b
        if found > h then
          _, before = entry(found - 1)
        end
        back = math.min(c - before, cost)
        if back > 0 then
          for i = found, n - 1 do
            local e, ci = entry(i)
            put(i, e, ci - back)
          end
          cNew = cNew - back
        end
        -- drop entries left empty at either end
        while h < n do
          local before2 = b
          if n - 1 > h then
            _, before2 = entry(n - 2)
          end
          if cNew ~= before2 then
            break
          end
          redis.call('HDEL', key, n - 1)
          n = n - 1
          cNew = before2
        end
        while h < n do
          local _, c0 = entry(h)
          if c0 ~= b then
            break
          end
          redis.call('HDEL', key, h)
          h = h + 1
        end
        if h < n then
          eNew = entry(n - 1)
        end
        dirty = true
      end
    end
    finish()
    if back > 0 then
      return {1}
    end
    return {0}
  end

  local ok = total <= L - cost
  if consume and (ok or countRejected) then
    local x = expiryOf()
    local add = math.min(cost, SAT - total)
    if h < n and eNew >= x then  -- the same instant or sub-window (or a clock stepped back)
      cNew = cNew + add
      put(n - 1, eNew, cNew)
    else
      eNew = x
      cNew = cNew + add
      put(n, eNew, cNew)
      n = n + 1
    end
    total = total + add
    if cNew > SAT then  -- keep cumulative weights exact: rebase them on the head
      for i = h, n - 1 do
        local e, c = entry(i)
        put(i, e, c - b)
      end
      cNew = cNew - b
      b = 0
    end
    dirty = true
  end
  finish()

  local reset = 0
  if h < n then
    reset = eNew - now
  end
  local remaining = math.max(0, L - total)
  if ok then
    return {1, remaining, reset, 0, eNew or 0}
  end
  -- denied: the time until the oldest entries holding at least the excess have expired
  local excess = total - (L - cost)
  local lo, hi = h, n - 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local _, c = entry(mid)
    if c - b >= excess then
      hi = mid
    else
      lo = mid + 1
    end
  end
  local e = entry(lo)
  return {0, remaining, reset, e - now, 0}
end
