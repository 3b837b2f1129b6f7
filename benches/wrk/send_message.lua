-- wrk script: blocking JSON-RPC SendMessage to the echo agent.
-- wrk -t1 -c32 -d10s -s benches/wrk/send_message.lua --latency http://127.0.0.1:8765/jsonrpc
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"bench-1","role":"ROLE_USER","parts":[{"text":"hello ferry"}]}}}'

local errors = 0
response = function(status, headers, body)
  if status ~= 200 or string.find(body, '"error":', 1, true) then
    errors = errors + 1
  end
end

done = function(summary, latency, requests)
  io.write(string.format("A2A errors seen by the last thread: %d\n", errors))
end
