-- wrk: one token a request from $TOKENS, each thread its own stride of the
-- list (distinct tokens across threads), sent as nginx's auth_request sends
-- it (X-Original-URI), with $TARGET=nginx as a player's request to nginx, or
-- with $TARGET=playback as the CDN exchange's POST /v1/playback for the
-- profile $PROFILE (Benchmarks/cdn).
local tokens = {}
local index, stride = 0, 1
local target = os.getenv("TARGET") or "gate"
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("offset", counter - 1)
end

function init(args)
  for line in io.lines(os.getenv("TOKENS")) do tokens[#tokens + 1] = line end
  index = offset or 0
  stride = tonumber(os.getenv("THREADS") or "2")
end

local resources = tonumber(os.getenv("RESOURCES") or "0")
local device = os.getenv("DEVICE")

function request()
  local position = index % #tokens
  local token = tokens[position + 1]
  index = index + stride
  -- With $RESOURCES, token i is for resource R<i mod RESOURCES> (mint_tokens.py).
  local resource = resources > 0 and ("R" .. (position % resources)) or "TNT"
  if target == "playback" then
    local body = '{"token":"' .. token .. '","resource":"TNT","profile":"' .. os.getenv("PROFILE") .. '"}'
    return wrk.format("POST", "/v1/playback", { ["Content-Type"] = "application/json" }, body)
  elseif target == "nginx" then
    return wrk.format("GET", "/hls/tnt/seg.ts?token=" .. token)
  elseif target == "plain-nginx" then
    return wrk.format("GET", "/plain/seg.ts?token=" .. token)
  end
  local headers = { ["X-Original-URI"] = "/hls/tnt/seg.ts?token=" .. token, ["X-Token-Resource"] = resource }
  -- With $DEVICE, the device the (device-bound) authorization tokens name.
  if device then headers["X-Token-Device-Id"] = device end
  return wrk.format("GET", "/v1/auth-request", headers)
end

-- After the run: how many answers were not 2xx (a token list shorter than
-- the run gives TOKEN_REPLAYED, which still costs a full verification).
function done(summary, latency, requests)
  io.write(string.format("non2xx=%d\n", summary.errors.status))
end
