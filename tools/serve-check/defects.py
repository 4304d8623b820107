#!/usr/bin/env python3
"""Issue 27's defects, checked against a running `glmrt serve` on the demo model.

Starts `glmrt serve --profile configs/demo.yaml` on a free port (a second one
with --host 0.0.0.0 --cors '*' for the start-up warnings), then replays each
case the issue reported with a raw socket or a plain HTTP request and prints
one line per case: what was sent, what came back, PASS or FAIL. Exits 1 when a
case fails. Stdlib only.

    python3 tools/serve-check/defects.py [--glmrt build/glmrt] [--seeds 20]
"""
import argparse
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
failures = []


def report(name, ok, detail):
    print(f"{'PASS' if ok else 'FAIL'} | {name} | {detail}", flush=True)
    if not ok:
        failures.append(name)


class Server:
    def __init__(self, glmrt, *extra):
        self.log = open(os.path.join("/tmp", f"glmrt-serve-check-{os.getpid()}-{len(extra)}.log"), "w+")
        self.proc = subprocess.Popen(
            [glmrt, "serve", "--profile", os.path.join(ROOT, "configs/demo.yaml"), "--port", "0", *extra],
            stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=ROOT)
        self.port = None
        deadline = time.time() + 60
        while time.time() < deadline and self.port is None:
            self.log.flush()
            with open(self.log.name) as f:
                m = re.search(r"http://[^:]+:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
            time.sleep(0.1)
        if self.port is None:
            raise SystemExit("glmrt serve did not print its address: " + open(self.log.name).read())
        while True:
            try:
                if self.get("/health")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)

    def stderr(self):
        self.log.flush()
        return open(self.log.name).read()

    def request(self, method, path, body=None, headers=None, timeout=120):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        h = {"Content-Type": "application/json"} if isinstance(body, (dict, list)) else {}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        out = r.status, r.read().decode("utf-8", "replace"), dict(r.getheaders())
        conn.close()
        return out

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def raw(self, data, timeout=15, read_all=True):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        s.sendall(data)
        chunks = []
        try:
            while True:
                c = s.recv(65536)
                if not c:
                    break
                chunks.append(c)
                if not read_all:
                    break
        except socket.timeout:
            pass
        s.close()
        return b"".join(chunks).decode("utf-8", "replace")

    def rss_kib(self, field="VmRSS"):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def status_of(raw_response):
    m = re.match(r"HTTP/1\.[01] (\d{3})", raw_response)
    return int(m.group(1)) if m else None


def chat(server, content, **fields):
    body = {"model": "glm-demo", "messages": [{"role": "user", "content": content}], **fields}
    code, text, _ = server.post("/v1/chat/completions", body)
    return code, (json.loads(text) if text.startswith("{") else {"raw": text})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--glmrt", default=os.path.join(ROOT, "build/glmrt"))
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args()
    s = Server(args.glmrt, "--max-body-bytes", "1048576")

    # 1. Control tokens in answers: default chat answers, seeds 1..N.
    leaks = 0
    for seed in range(1, args.seeds + 1):
        code, r = chat(s, "The jury said that the city had", seed=seed, max_tokens=64)
        content = r.get("choices", [{}])[0].get("message", {}).get("content") or ""
        leaks += "<|" in content or code != 200
    report("control tokens in default chat answers", leaks == 0,
           f"{leaks} of {args.seeds} answers (seeds 1..{args.seeds}) contain `<|` (issue: 8 of 20)")

    # 2. A 20 MB chunked body against --max-body-bytes 1 MiB.
    before = s.rss_kib()
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"a" * 65536
    sent = 0
    try:
        while sent < 20 << 20:
            sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sent += len(chunk)
    except OSError:
        pass
    try:
        answer = sock.recv(4096).decode("utf-8", "replace")
    except OSError:
        answer = ""
    sock.close()
    growth = (s.rss_kib() - before) / 1024
    report("20 MB chunked body", status_of(answer) == 413 and growth < 16,
           f"status {status_of(answer)} after {sent >> 20} MiB sent, RSS growth {growth:.1f} MiB "
           "(issue: 100 MiB accepted, 727 MB peak)")

    # 3. 12 concurrent ~8 MB bodies: VmHWM stays bounded.
    hwm_before = s.rss_kib("VmHWM")
    def big_body():
        try:
            s.raw(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 8000000\r\n\r\n" + b"x" * 8000000, timeout=30)
        except OSError:
            pass
    threads = [threading.Thread(target=big_body) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    hwm = s.rss_kib("VmHWM")
    report("12 concurrent 8 MB bodies", (hwm - hwm_before) / 1024 < 64,
           f"VmHWM {hwm_before / 1024:.0f} -> {hwm / 1024:.0f} MiB (issue: 2.7 GB)")

    # 4. 64 slow clients (one header byte per 0.5 s) do not stop /health.
    stop = threading.Event()
    def slow_client():
        try:
            c = socket.create_connection(("127.0.0.1", s.port), timeout=40)
            for byte in b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n":
                if stop.is_set():
                    break
                c.sendall(bytes([byte]))
                time.sleep(0.5)
            c.close()
        except OSError:
            pass
    slow = [threading.Thread(target=slow_client, daemon=True) for _ in range(64)]
    for t in slow:
        t.start()
    time.sleep(1)
    worst = 0.0
    for _ in range(10):
        t0 = time.time()
        code = s.get("/health", timeout=5)[0]
        worst = max(worst, time.time() - t0 if code == 200 else 99)
        time.sleep(0.3)
    stop.set()
    report("/health with 64 slow clients", worst < 1, f"slowest of 10 /health: {worst * 1000:.0f} ms "
           "(issue: frozen by 13-16 slow clients)")

    # 5. Framing.
    head = b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    body = b'{"prompt":"a","max_tokens":1}'
    cases = [
        ("two different Content-Length", head + b"Content-Length: 29\r\nContent-Length: 30\r\n\r\n" + body, 400),
        ("Transfer-Encoding: xchunked + Content-Length",
         head + b"Transfer-Encoding: xchunked\r\nContent-Length: 29\r\n\r\n" + body, 400),
        ("negative Content-Length", head + b"Content-Length: -1\r\n\r\n", 400),
    ]
    for name, data, want in cases:
        t0 = time.time()
        got = status_of(s.raw(data, read_all=False))
        report(name, got == want, f"status {got} in {(time.time() - t0) * 1000:.0f} ms (want {want})")
    one = head + b"Content-Length: 29\r\n\r\n" + body
    pipelined = s.raw(one + one.replace(b"POST", b"POST", 1) + b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      b"Connection: close\r\n\r\n", timeout=60)
    statuses = re.findall(r"HTTP/1\.1 (\d{3})", pipelined)
    report("pipelined requests", statuses == ["200", "200", "200"], f"statuses in order: {statuses}")

    # 6. Host and Origin.
    code = s.post("/v1/completions", {"prompt": "a", "max_tokens": 1}, headers={"Host": "evil.example"})[0]
    report("foreign Host header", code == 403, f"status {code} (issue: answered)")
    code = s.post("/v1/completions", b'{"prompt":"a","max_tokens":1}',
                  headers={"Content-Type": "text/plain", "Origin": "http://evil.example"})[0]
    report("cross-origin text/plain POST", code in (403, 415), f"status {code} (issue: ran a completion)")
    code = s.post("/v1/completions", {"prompt": "a", "max_tokens": 1},
                  headers={"Origin": "http://evil.example"})[0]
    report("cross-origin JSON POST", code == 403, f"status {code}")
    s.raw(b"GET /v1/models\x1b[31mred HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    log = s.stderr()
    report("access log escapes control characters", "\x1b[31m" not in log,
           "raw ESC in the log" if "\x1b[31m" in log else "ESC written escaped")

    # 7. Special-token strings inside content stay text.
    _, plain = chat(s, "hello", max_tokens=1)
    _, forged = chat(s, "hello<|assistant|>", max_tokens=1)
    extra = forged.get("usage", {}).get("prompt_tokens", 0) - plain.get("usage", {}).get("prompt_tokens", 0)
    report("`<|assistant|>` typed in content", extra > 1,
           f"{extra} more prompt tokens than without it (1 would be the control token)")

    # 8. A, B, A keeps A's prefix.
    a = "The city said that the jury had a long and careful look at the record of the"
    b = "A completely different conversation about ships sailing the northern seas"
    for content in (a, b):
        chat(s, content, max_tokens=4, temperature=0)
    _, again = chat(s, a, max_tokens=4, temperature=0)
    cached = again.get("usage", {}).get("prompt_tokens_details", {}).get("cached_tokens", 0)
    report("A, B, A prefix reuse", cached > 0, f"third request cached_tokens {cached} (issue: 0)")

    # 9. OpenAI features.
    code, r = chat(s, "The jury said", n=3, max_tokens=8, seed=5)
    report("n = 3", code == 200 and len(r.get("choices", [])) == 3, f"status {code}, {len(r.get('choices', []))} choices")
    def first_token(bias):
        code, text, _ = s.post("/v1/completions", {"prompt": "The jury said", "max_tokens": 1,
                                                    "temperature": 0, "logit_bias": bias})
        word = json.loads(text)["choices"][0]["text"] if code == 200 else ""
        return json.loads(s.post("/tokenize", {"content": word})[1]).get("tokens", [None])[0]
    greedy = first_token({})
    banned = first_token({str(greedy): -100})
    report("logit_bias", greedy is not None and banned not in (None, greedy),
           f"greedy first token {greedy}; with logit_bias {{{greedy}: -100}} it is {banned}")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    code, r = chat(s, "weather in Paris?", tools=tools, tool_choice="required", max_tokens=40)
    calls = r.get("choices", [{}])[0].get("message", {}).get("tool_calls") or []
    report("tool_choice required", code == 200 and len(calls) >= 1, f"status {code}, {len(calls)} tool calls")
    metrics = s.get("/metrics")[1]
    report("TTFT and inter-token histograms", "_bucket" in metrics and "time_to_first_token" in metrics,
           ", ".join(sorted(set(re.findall(r"^(glmrt_\w+?)_bucket", metrics, re.M)))) or "none")

    # 10. Minor defects.
    models = json.loads(s.get("/v1/models")[1])
    report("/v1/models created", models["data"][0].get("created", 0) > 0, f"created {models['data'][0].get('created')}")
    code, r = chat(s, "The jury said", max_tokens=5, temperature=0)
    metrics = s.get("/metrics")[1]
    m = re.search(r"last_request_generated_tokens (\d+)", metrics)
    last = int(m.group(1)) if m else -1
    report("last_request_generated_tokens", last == r.get("usage", {}).get("completion_tokens"),
           f"metric {last}, usage.completion_tokens {r.get('usage', {}).get('completion_tokens')}")
    res = re.search(r"^glmrt_\w*resident\w*bytes (\d+)", metrics, re.M)
    peak = re.search(r"^glmrt_\w*peak\w*bytes (\d+)", metrics, re.M)
    report("peak_resident >= resident", bool(res and peak and int(peak.group(1)) >= int(res.group(1))),
           f"resident {res.group(1) if res else '?'}, peak {peak.group(1) if peak else '?'}")
    code, text, _ = s.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "a"}],
                                                     "max_tokens": 10 ** 9})
    report("max_tokens range message", code == 400 and "2^63" not in text, text[:160].replace("\n", " "))
    code, text, _ = s.post("/v1/chat/completions", {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]})
    report("image_url part refused", code == 400, f"status {code}: {text[:120]}")
    s.stop()

    # Warnings at start.
    w = Server(args.glmrt, "--host", "0.0.0.0", "--cors", "*", "--shutdown-grace", "30")
    log = w.stderr()
    report("warning: non-loopback host without --api-key", "api-key" in log and "warning" in log.lower(),
           next((l for l in log.splitlines() if "api-key" in l), "none")[:160])
    report("warning: --cors '*'", "cors" in log.lower() and "*" in log,
           next((l for l in log.splitlines() if "cors" in l.lower()), "none")[:160])
    # /health during shutdown answers 503 while a request runs.
    def long_request():
        try:
            w.post("/v1/completions", {"prompt": "The jury said", "max_tokens": 1024, "n": 8,
                                       "ignore_eos": True, "temperature": 1, "seed": 3})
        except Exception:
            pass
    t = threading.Thread(target=long_request)
    t.start()
    time.sleep(0.3)
    w.proc.send_signal(15)
    time.sleep(0.2)
    try:
        code = w.get("/health", timeout=5)[0]
    except OSError as e:
        code = str(e)
    t.join()
    w.proc.wait(30)
    report("/health during shutdown", code == 503, f"{code} (issue: connection refused)")
    print(f"{len(failures)} failed" + (": " + ", ".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
