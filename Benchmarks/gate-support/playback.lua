-- wrk: POST /v1/playback with one media token a request from $TOKENS (each
-- thread its own stride of the list, so tokens are distinct across threads),
-- for the profile $PROFILE: the CDN exchange's rate (Benchmarks/cdn).
local tokens = {}
local index, stride = 0, 1
local counter = 0
local profile = os.getenv("PROFILE")

function setup(thread)
  counter = counter + 1
  thread:set("offset", counter - 1)
end

function init(args)
  for line in io.lines(os.getenv("TOKENS")) do tokens[#tokens + 1] = line end
  index = offset or 0
  stride = tonumber(os.getenv("THREADS") or "2")
end

function request()
  local token = tokens[(index % #tokens) + 1]
  index = index + stride
  local body = '{"token":"' .. token .. '","resource":"TNT","profile":"' .. profile .. '"}'
  return wrk.format("POST", "/v1/playback", { ["Content-Type"] = "application/json" }, body)
end

function done(summary, latency, requests)
  io.write(string.format("non2xx=%d\n", summary.errors.status))
end
