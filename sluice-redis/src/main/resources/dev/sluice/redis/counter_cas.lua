-- Sluice: the compare-and-set of one synchronized-mode record (RedisCounterStore). The record is a hash: field 'v'
-- the version, one field per frame (its start in nanoseconds since the epoch) holding the frame's count.
--
-- KEYS[1]  the record
-- ARGV[1]  the expected version, '0' for "no record" (no record has version 0)
-- ARGV[2]  the new version
-- ARGV[3]  when the record expires (PEXPIREAT, milliseconds since the epoch)
-- ARGV[4], ARGV[5], ...  frame, count, frame, count, ...
--
-- Answers 1 if the record now holds exactly the new version and frames (replaced whole, expiry set), 0 if its
-- version was not the expected one (nothing written).
--
-- Every number stays the decimal string the client sent: versions are any 64-bit value and frames are nanoseconds,
-- both beyond 2^53 where Lua's doubles stop being exact, so the script compares versions as strings (the client
-- writes them in one canonical form) and never converts a number.

local current = redis.call('HGET', KEYS[1], 'v')
if ARGV[1] == '0' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return 0
  end
elseif current ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', ARGV[2])
local n = #ARGV
for i = 4, n, 200 do  -- 100 frames per HSET: unpack has a bounded stack
  redis.call('HSET', KEYS[1], unpack(ARGV, i, math.min(i + 199, n)))
end
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return 1
