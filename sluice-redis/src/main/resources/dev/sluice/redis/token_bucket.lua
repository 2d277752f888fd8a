-- TOKEN_BUCKET (dev.sluice.algorithm.TokenBucketState): hash {t = whole tokens, f = the fractional token as a
-- numerator over W, l = time of the last refill}. No key: a full bucket.
local s = redis.call('HMGET', key, 't', 'f', 'l')
local tokens, frac, last
if s[1] then
  tokens = tonumber(s[1])
  frac = tonumber(s[2])
  last = tonumber(s[3])
  if tokens > L then  -- written under a higher limit
    tokens = L
    frac = 0
  end
else
  tokens = L
  frac = 0
  last = now
end

if now > last then
  local elapsed = now - last
  last = now
  if tokens < L then
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

local function store()
  if tokens >= L then
    redis.call('DEL', key)
    return
  end
  save({'t', tokens, 'f', frac, 'l', last}, last + untilTokens(L))
end

if mode == 'g' then
  if tokens >= L then
    return {0}
  end
  tokens = math.min(L, tokens + cost)
  if tokens == L then
    frac = 0
  end
  store()
  return {1}
end

local ok = tokens >= cost
if consume then
  if ok then
    tokens = tokens - cost
    store()
  elseif countRejected then
    tokens = 0
    frac = 0
    store()
  end
end
local retry = 0
if not ok then
  retry = untilTokens(cost)
end
return {flag(ok), tokens, untilTokens(L), retry, 0}
