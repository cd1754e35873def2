#!/usr/bin/env python3
"""runner serve against 10,000 idle connections and slowloris clients, while a real client
is served. Usage: benches/serve_hostile.py [runner binary]. Prints what BENCHMARKS.md quotes."""
import os, resource, socket, subprocess, sys, time, urllib.request

runner = sys.argv[1] if len(sys.argv) > 1 else "target/release/runner"
resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
port = 19555
srv = subprocess.Popen([runner, "serve", "--port", str(port), "--header-timeout", "10s"], stderr=subprocess.DEVNULL,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000)))
time.sleep(0.5)

def real_request():
    t = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as r:
        r.read()
        ok = r.status == 200
    return ok, (time.perf_counter() - t) * 1000

def rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(("VmRSS", "VmHWM")):
            yield line.split()[0], int(line.split()[1]) // 1024

def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))

print("baseline real request: ok=%s %.2f ms" % real_request())
idle = []
for _ in range(10_000):
    s = socket.socket(); s.setblocking(True)
    try:
        s.connect(("127.0.0.1", port)); idle.append(s)
    except OSError as e:
        print("connect failed:", e); break
slow = []
for _ in range(500):
    s = socket.socket(); s.connect(("127.0.0.1", port)); s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-a: "); slow.append(s)
time.sleep(1)
print(f"opened {len(idle)} idle + {len(slow)} slowloris; serve holds {fds(srv.pid)} fds; " + ", ".join(f"{k} {v} MB" for k, v in rss_mb(srv.pid)))
lat = []
for i in range(10):
    for s in slow:
        try: s.sendall(b"a")
        except OSError: pass
    ok, ms = real_request(); lat.append(ms)
    assert ok
    time.sleep(1)
lat.sort()
print("real requests beside them: 10/10 ok, median %.2f ms, max %.2f ms" % (lat[5], lat[-1]))
closed = 0
for s in slow:
    s.settimeout(0.01)
    try:
        if s.recv(1) == b"": closed += 1
    except (socket.timeout, BlockingIOError): pass
    except OSError: closed += 1
print(f"slowloris connections closed by the server after the 10 s header timeout: {closed}/{len(slow)}")
print(f"serve holds {fds(srv.pid)} fds now; " + ", ".join(f"{k} {v} MB" for k, v in rss_mb(srv.pid)))
srv.terminate(); srv.wait()
