#!/usr/bin/env python3
"""Aggregate decode tokens/s of N concurrent streaming requests to a running
`glmrt serve` (the figure in docs/serve.md):

    scripts/serve_throughput.py --port 8080 --streams 1 --streams 4

Each stream asks /v1/chat/completions for --tokens tokens (ignore_eos, a
prompt of its own) and counts the content chunks it receives; the aggregate
is every stream's tokens over the wall time from the first request to the
last answer's end. Repeats each count --reps times and prints the median.
"""
import argparse
import json
import statistics
import threading
import time
import urllib.request


def one_stream(url, index, tokens, counts):
    body = json.dumps({
        "messages": [{"role": "user", "content": f"Story number {index}: tell it."}],
        "max_tokens": tokens, "ignore_eos": True, "stream": True,
        "stream_options": {"include_usage": True}}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        for line in response:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("usage"):
                counts[index] = event["usage"]["completion_tokens"]


def aggregate(url, streams, tokens):
    counts = [0] * streams
    threads = [threading.Thread(target=one_stream, args=(url, i, tokens, counts))
               for i in range(streams)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.monotonic() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--streams", type=int, action="append")
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}/v1/chat/completions"
    for n in args.streams or [1, 4]:
        runs = [aggregate(url, n, args.tokens) for _ in range(args.reps)]
        print(f"{n} streams: {statistics.median(runs):.1f} tokens/s aggregate "
              f"({statistics.median(runs) / n:.1f} per stream)")


if __name__ == "__main__":
    main()
