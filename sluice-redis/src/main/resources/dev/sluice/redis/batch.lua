-- Several requests in one run (RedisBatches), each decided in order as its own script would decide it, unless the
-- server's clock has passed its deadline: then it reads and writes nothing, since its caller has been answered.
--
-- KEYS     the parts' keys, request after request
-- ARGV[1]  the number of requests; then per request: its deadline (microseconds by the server's clock, 0: none),
--          'j' for a joint request (all or nothing) or 'a' for one part acquiring, its number of parts n, and the 9
--          fields of each part (group.lua)
-- answers  the server's TIME in microseconds; then per request 1 and 5 integers per part, or 0 alone when it was
--          past its deadline
local t = timeOf('T')
local out = {t}
local a, k = 2, 1
for _ = 1, tonumber(ARGV[1]) do
  local deadline, joint, n = tonumber(ARGV[a]), ARGV[a + 1] == 'j', tonumber(ARGV[a + 2])
  a = a + 3
  if deadline ~= 0 and t > deadline then
    out[#out + 1] = 0
  else
    out[#out + 1] = 1
    group(k, a, n, joint, out)
  end
  a = a + 9 * n
  k = k + n
end
return out
