-- TOKEN_BUCKET (dev.sluice.algorithm.TokenBucketState): (tokens, frac, last, fullSeen), the whole tokens, the
-- fractional token as a numerator over W, the newest time seen (that of the last refill) and the newest time the
-- bucket was seen full. No key: a full bucket, seen full now.
ALGORITHMS.tb = function(p)
  local key, mode, now, L, W, cost = p.key, p.mode, p.now, p.L, p.W, p.cost
  local countRejected, place, consume = p.countRejected, p.place, p.consume
  local tokens, frac, last, fullSeen
  local v = readState(key)
  if v then
    tokens, frac, last, fullSeen = struct.unpack('<dddd', v)
    if tokens > L then  -- written under a higher limit
      tokens = L
      frac = 0
    end
  else
    tokens, frac, last, fullSeen = L, 0, now, now
  end

  -- refill up to now; a now older than the newest time seen refills nothing
  if now > last then
    if tokens < L then
      local elapsed = now - last
      if elapsed >= W then
        tokens = L
        frac = 0
      else
        local whole
        whole, frac = muladddivmod(elapsed, L, frac, W)
        tokens = tokens + whole
        if tokens >= L then
          tokens = L
          frac = 0
        end
      end
    end
    last = now
  end
  if tokens >= L then
    fullSeen = last
  end

  -- time until the bucket holds n tokens
  local function untilTokens(n)
    if tokens >= n then
      return 0
    end
    local q, r = mulsubdivmod(n - tokens, W, frac, L)
    if r > 0 then
      q = q + 1
    end
    return q
  end

  -- writes the state, which becomes equivalent to a fresh one once full, reset microseconds from the last refill
  local function save(reset)
    if tokens >= L then
      deleteState(key)
    else
      store(p, struct.pack('<dddd', tokens, frac, last, fullSeen), last + reset)
    end
  end

  if mode == 'g' then
    -- a bucket full at any time since the reservation has given its tokens back already
    if tokens >= L or fullSeen > place then
      return {0}
    end
    tokens = math.min(L, tokens + cost)
    if tokens == L then
      frac = 0
    end
    save(untilTokens(L))
    return {1}
  end

  local ok = tokens >= cost
  if consume then
    if ok then
      tokens = tokens - cost
    elseif countRejected then
      tokens = 0
      frac = 0
    end
  end
  local reset = untilTokens(L)
  if consume and (ok or countRejected) then
    save(reset)
  end
  if ok then
    return {1, tokens, reset, 0, last}
  end
  return {0, tokens, reset, untilTokens(cost), last}
end
