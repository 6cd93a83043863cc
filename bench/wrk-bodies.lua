-- wrk script: POSTs a pre-signed body set (one request per line of the file
-- named by the first argument: "<timestamp>\t<signature>\t<json body>"),
-- each thread cycling through its own share of the lines so that no two
-- threads send the same event. wrk has no HMAC, so bench/generator.ts signs
-- the set just before each run (Slack's timestamp window is five minutes).
-- Prints one line "WRK_JSON {...}" with the run's figures when done.

local counter = 0
local threads = {}

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local requests = {}
local count = 0
local next_index = 0

function init(args)
  local path = args[1]
  local shares = tonumber(args[2])
  local line_number = 0
  for line in io.lines(path) do
    if line_number % shares == id then
      local ts, signature, body = line:match("^(%d+)\t(%S+)\t(.*)$")
      count = count + 1
      requests[count] = wrk.format("POST", nil, {
        ["Content-Type"] = "application/json",
        ["X-Slack-Request-Timestamp"] = ts,
        ["X-Slack-Signature"] = signature,
      }, body)
    end
    line_number = line_number + 1
  end
end

function request()
  next_index = next_index % count + 1
  return requests[next_index]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
