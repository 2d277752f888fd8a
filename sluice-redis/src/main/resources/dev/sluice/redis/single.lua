-- One request (or give-back) for one key, by the one algorithm in ALGORITHMS.
--
-- KEYS[1]  the key's state
-- ARGV     mode, now, L, W, cost, countRejected, margin, place ('0' or absent unless giving back), then S and strict
--          for a sliding-window counter: the fields of part(), in order
local _, decide = next(ALGORITHMS)
return decide(part(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9],
  ARGV[10]))
