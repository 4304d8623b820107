#!/usr/bin/env python3
"""The calibration text of docs/convert.md: every 10th training text of the Brown corpus split
(tools/train-demo/prepare_corpus.py's train.jsonl), its first 6 paragraphs, joined by blank
lines. The validation prompts of the demo and trained models come from the held-out texts.

usage: tools/convert-bench/calibration_text.py CORPUS_DIR/train.jsonl > calib.txt
"""
import json
import sys

texts = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
print("\n\n".join(p for t in texts[::10] for p in t["paragraphs"][:6]))
