-- LEAKY_BUCKET (dev.sluice.algorithm.LeakyBucketState), GCRA: (tat, frac, last, emptySeen), the theoretical arrival
-- time, its fractional microsecond as a numerator over L, the newest time seen and the newest time the bucket was
-- seen empty. No key: an empty bucket, seen empty now.
ALGORITHMS.lb = function(p)
  local key, mode, now, L, W, cost = p.key, p.mode, p.now, p.L, p.W, p.cost
  local countRejected, place, consume = p.countRejected, p.place, p.consume
  local tat, frac, last, emptySeen
  local v = readState(key)
  if v then
    tat, frac, last, emptySeen = struct.unpack('<dddd', v)
    if frac >= L then  -- written under a higher limit: round the level up
      tat = tat + 1
      frac = 0
    end
  else
    frac, last, emptySeen = 0, now, now
  end

  -- moves to now, or stays at the newest time seen if the clock has stepped back (the level never rises by going
  -- back), and notes an empty bucket
  local function advance(time)
    if time > last then
      last = time
    end
    if tat ~= nil and (tat < last or (tat == last and frac == 0)) then
      tat = nil
      frac = 0
    end
    if tat == nil then
      emptySeen = last
    end
    return last
  end

  -- writes the state, which becomes equivalent to a fresh one once empty
  local function save()
    if tat == nil then
      deleteState(key)
    else
      local expiresAt = tat
      if frac > 0 then
        expiresAt = tat + 1
      end
      store(p, struct.pack('<dddd', tat, frac, last, emptySeen), expiresAt)
    end
  end

  now = advance(now)
  local inc, incFrac = muldivmod(cost, W, L)

  if mode == 'g' then
    -- a bucket empty at any time since the reservation has leaked its level away already
    if tat == nil or emptySeen > place then
      return {0}
    end
    local t = tat - inc
    local f = frac - incFrac
    if f < 0 then
      t = t - 1
      f = f + L
    end
    tat = t
    frac = f
    advance(now)
    save()
    return {1}
  end

  local nxt, nxtFrac
  if tat == nil then
    nxt = now + inc
    nxtFrac = incFrac
  else
    nxt = tat + inc
    nxtFrac = frac + incFrac
  end
  if nxtFrac >= L then
    nxt = nxt + 1
    nxtFrac = nxtFrac - L
  end
  local deadline = now + W
  local ok = nxt < deadline or (nxt == deadline and nxtFrac == 0)
  if consume then
    if ok then
      tat = nxt
      frac = nxtFrac
      save()
    elseif countRejected then
      tat = deadline  -- full, never fuller
      frac = 0
      nxt = deadline + inc
      nxtFrac = incFrac
      save()
    end
  end

  local remaining = L
  local reset = 0
  if tat ~= nil then
    local headroom = now + W - tat
    if headroom <= 0 then
      remaining = 0
    else
      remaining = mulsubdivmod(headroom, L, frac, W)
    end
    reset = tat - now
    if frac > 0 then
      reset = reset + 1
    end
  end
  if ok then
    return {1, remaining, reset, 0, last}
  end
  local retry = nxt - deadline
  if nxtFrac > 0 then
    retry = retry + 1
  end
  return {0, remaining, reset, retry, last}
end
