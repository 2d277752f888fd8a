-- SLIDING_LOG (dev.sluice.algorithm.SlidingLogState): a request at t counts while now < t + W.
local function expiryOf()
  return now + W
end
