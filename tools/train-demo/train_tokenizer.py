#!/usr/bin/env python3
"""Train the byte-level BPE on the training split and check decode(encode(x)) == x."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import config  # noqa: E402
import data  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="work")
    args = ap.parse_args()
    train_docs = data.load_docs(os.path.join(args.work, "corpus/train.jsonl"))
    held_docs = data.load_docs(os.path.join(args.work, "corpus/heldout.jsonl"))
    merges = bpe.train([data.doc_text(d) for d in train_docs], config.VOCAB_SIZE)
    path = os.path.join(args.work, "tokenizer.json")
    vocab = bpe.write_tokenizer_json(path, merges)
    bpe.write_tokenizer_config(os.path.join(args.work, "tokenizer_config.json"), vocab)
    tok = bpe.Tokenizer.from_file(path)
    chars = tokens = 0
    for d in train_docs + held_docs:
        text = data.doc_text(d)
        ids = tok.encode(text)
        assert tok.decode(ids) == text, f"round trip failed on {d['id']}"
        chars += len(text)
        tokens += len(ids)
    chat = data.CHAT_HEAD + data.chat_turn("Hello there.", "Good morning.") + "<|user|>"
    assert tok.decode(tok.encode(chat)) == chat
    print(f"vocab {len(vocab)} ({len(merges)} merges); decode(encode(x)) == x on all "
          f"{len(train_docs) + len(held_docs)} texts; {chars / tokens:.2f} characters per token")


if __name__ == "__main__":
    main()
