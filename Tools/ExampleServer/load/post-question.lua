-- wrk script: every request POSTs one fresh question.asked to /events (docs/spec/EVENTS.md).
-- Ids are unique by a counter in each wrk thread, the thread's number and a random number of the run.
--
--   wrk -t2 -c64 -d15s --latency -s Tools/ExampleServer/load/post-question.lua http://127.0.0.1:8080

local threads = {}

function setup(thread)
   thread:set("thread_number", #threads + 1)
   table.insert(threads, thread)
end

function init(args)
   math.randomseed(os.time() + thread_number * 7919)
   run = math.random(0, 0x7FFFFFFF)
   counter = 0
end

function request()
   counter = counter + 1
   local question = string.format("%08X-%04X-4000-8000-%012X", run, thread_number, counter)
   local body = string.format(
      '{"type":"question.asked","id":"wrk-%08x-%d-%d","subject":"kid-%d","occurredAt":"2026-11-20T09:00:00Z",' ..
      '"question":{"id":"%s","topic":{"communication":{"people":[{"handle":{"value":"friend-%d","kind":"custom"}}],' ..
      '"actions":["message"]}}}}\n',
      run, thread_number, counter, counter % 8, question, counter % 40)
   return wrk.format("POST", "/events", { ["Content-Type"] = "application/x-ndjson" }, body)
end

-- One line for scripts: the totals, the errors by kind and the latency percentiles in microseconds.
function done(summary, latency, requests)
   local errors = summary.errors
   io.write(string.format(
      "wrk-summary: requests=%d seconds=%.2f rps=%.0f non2xx=%d connect_errors=%d read_errors=%d write_errors=%d timeouts=%d p50_us=%d p99_us=%d\n",
      summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6), errors.status,
      errors.connect, errors.read, errors.write, errors.timeout, latency:percentile(50), latency:percentile(99)))
end
