#!/usr/bin/env python3
"""Check bpe.py's encoder against glmrt's HF-exact tokenizer on held-out text and chat renders,
and that `glmrt tokenize --decode` gives the text back."""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import data  # noqa: E402


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="work")
    ap.add_argument("--tokenizer", default=None)
    ap.add_argument("--glmrt", default=os.path.join(here, "../../build/glmrt"))
    args = ap.parse_args()
    path = args.tokenizer or os.path.join(args.work, "tokenizer.json")
    tok = bpe.Tokenizer.from_file(path)
    docs = data.load_docs(os.path.join(args.work, "corpus/heldout.jsonl"))
    texts = [data.doc_text(d) for d in docs[:20]]
    texts.append(data.CHAT_HEAD + data.chat_turn("The jury said it.", "It did.") + "<|user|>")
    texts.append("Hello, world! It's 1961 -- isn't it?\n\n  Tabs\tand  spaces  ")
    for text in texts:
        ours = tok.encode(text)
        theirs = json.loads(subprocess.run([args.glmrt, "tokenize", "--tokenizer", path],
                                           input=text, capture_output=True, text=True,
                                           check=True).stdout)
        if ours != theirs:
            sys.exit(f"MISMATCH on {text[:60]!r}...")
        back = subprocess.run([args.glmrt, "tokenize", "--tokenizer", path, "--decode"],
                              input=json.dumps(ours), capture_output=True, text=True,
                              check=True).stdout
        if back != text:
            sys.exit(f"glmrt decode does not round-trip {text[:60]!r}")
    print(f"glmrt tokenize == bpe.py encode on {len(texts)} texts; glmrt decode round-trips")


if __name__ == "__main__":
    main()
