-- wrk script: POST a RateLimitRequest in proto3 JSON, the client id cycling through CLIENTS values (default 10000),
-- as the gRPC load command does. Counts non-2xx answers as wrk does (a 429 is one).
local clients = tonumber(os.getenv("CLIENTS") or "10000")
local domain = os.getenv("DOMAIN") or "oauth-token"
local n = 0

request = function()
  n = n + 1
  local body = '{"domain":"' .. domain .. '","descriptors":[{"entries":[{"key":"client_id","value":"client-'
    .. (n % clients) .. '"}]}]}'
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
