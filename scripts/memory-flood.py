#!/usr/bin/env python3
"""Floods `ferry serve --agent echo` with N messages of SIZE bytes (half of them streamed,
SHAPE text or data, 8 at a time) and prints the server's peak and final RSS against its
--max-store-bytes. Usage: scripts/memory-flood.py FERRY_BINARY BUDGET_BYTES SHAPE [N] [SIZE]"""
import http.client, json, os, subprocess, sys, threading, time, uuid, socket

binary, budget, shape = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 300
size = int(sys.argv[5]) if len(sys.argv) > 5 else 1_000_000
port = 9400 + os.getpid() % 500
server = subprocess.Popen([binary, "serve", "--agent", "echo", "--bind", f"127.0.0.1:{port}",
                           "--max-store-bytes", str(budget), "--max-body-bytes", str(4 * size + 100000)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
for _ in range(200):
    try:
        socket.create_connection(("127.0.0.1", port), 0.1).close(); break
    except OSError:
        time.sleep(0.05)

def part():
    if shape == "text":
        return {"text": "x" * size}
    members = {f"field-{i:08}": f"value {i:024}" for i in range(size // 48)}
    return {"data": members}

body_part = part()
errors = []
def send(i):
    streamed = i % 2 == 1
    req = {"jsonrpc": "2.0", "id": i, "method": "SendStreamingMessage" if streamed else "SendMessage",
           "params": {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [body_part]}}}
    data = json.dumps(req).encode()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    if streamed:
        headers["Accept"] = "text/event-stream"
    c.request("POST", "/", data, headers)
    r = c.getresponse(); out = r.read()
    if r.status != 200 or b"TASK_STATE_COMPLETED" not in out:
        errors.append((r.status, out[:200]))
    c.close()

def rss():
    f = open(f"/proc/{server.pid}/status").read()
    get = lambda k: int([l for l in f.splitlines() if l.startswith(k)][0].split()[1]) * 1024
    return get("VmHWM:"), get("VmRSS:")

lock = threading.Lock(); it = iter(range(n))
def worker():
    while True:
        with lock:
            i = next(it, None)
        if i is None: return
        send(i)
ts = [threading.Thread(target=worker) for _ in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
peak, now = rss()
server.terminate(); server.wait()
print(f"{os.path.basename(binary)} {shape} budget={budget>>20}MiB n={n}: peak RSS {peak>>20} MiB ({peak/budget:.2f} budgets), "
      f"after {now>>20} MiB ({now/budget:.2f}), errors {len(errors)} {errors[:1]}")
