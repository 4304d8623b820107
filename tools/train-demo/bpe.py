#!/usr/bin/env python3
"""Byte-level BPE in the GLM tokenizer layout: trainer, encoder, decoder, tokenizer.json writer.

The layout follows tests/fixtures/glm_tiny/tokenizer.json (see ../shared/tokenizer/README.md):
ids 0..255 are the 256 byte-level symbols in GPT-2 `bytes_to_unicode` order, then one id per
merge in merge order, then the 14 GLM special tokens (listed both in `added_tokens` and in
`model.vocab`, which is what makes the `tokenizers` library keep their ids). The pre-tokenizer is
GLM's Split regex followed by ByteLevel without its own regex.

The corpus this trainer sees is printable ASCII (prepare_corpus.py checks nothing else occurs), so
the pre-tokenizer regex is evaluated with Python's `re` after replacing the Unicode classes by
their ASCII meaning: on ASCII text `\\p{L}` is [A-Za-z], `\\p{N}` is [0-9] and `\\s` (Oniguruma's
White_Space) is [\\t\\n\\v\\f\\r ]. The encoder refuses non-ASCII text for that reason; glmrt's
own tokenizer handles any text and is checked against this one (check_tokenizer.py).
"""
import collections
import heapq
import json
import re

# GLM's pre-tokenizer, exactly as real GLM tokenizer.json files carry it.
GLM_SPLIT_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                   r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# The same regex on ASCII input, for Python's re (re.ASCII makes \s = [ \t\n\r\f\v]).
ASCII_SPLIT = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]{1,3}|"
    r" ?[^\sA-Za-z0-9]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+", re.ASCII)

SPECIAL_TOKENS = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>",
                  "<|user|>", "<|assistant|>", "<|observation|>", "<think>", "</think>",
                  "<tool_call>", "</tool_call>"]


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character map, in its canonical order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def pretokenize(text):
    if not text.isascii():
        raise ValueError("this encoder handles ASCII text only (see the module docstring)")
    return ["".join(BYTE_TO_CHAR[b] for b in w.encode()) for w in ASCII_SPLIT.findall(text)]


def train(texts, vocab_size):
    """Learn vocab_size - 256 - len(SPECIAL_TOKENS) merges; returns the merge list."""
    n_merges = vocab_size - 256 - len(SPECIAL_TOKENS)
    counts = collections.Counter()
    for t in texts:
        counts.update(pretokenize(t))
    words = [list(w) for w in counts]
    freq = [counts[w] for w in counts]
    pair_count = collections.Counter()
    where = collections.defaultdict(set)  # pair -> indices of words containing it
    for i, w in enumerate(words):
        for p in zip(w, w[1:]):
            pair_count[p] += freq[i]
            where[p].add(i)
    # Max-heap of (count, pair) with lazy deletion: an entry is live while its count is current.
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    while len(merges) < n_merges:
        # Highest count; ties go to the lexicographically smallest pair (any fixed rule would do).
        neg, best = heapq.heappop(heap)
        if pair_count.get(best) != -neg:
            continue
        merges.append(best)
        a, b = best
        merged = a + b
        for i in list(where[best]):
            w, f = words[i], freq[i]
            touched = set()
            for p in zip(w, w[1:]):
                pair_count[p] -= f
                touched.add(p)
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    out.append(merged)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for p in zip(out, out[1:]):
                pair_count[p] += f
                where[p].add(i)
                touched.add(p)
            for p in touched:
                if pair_count[p] <= 0:
                    del pair_count[p]
                else:
                    heapq.heappush(heap, (-pair_count[p], p))
        del where[best]
    return merges


class Tokenizer:
    """Encoder/decoder for the files `write_tokenizer_json` produces (or any vocab + merges)."""

    def __init__(self, vocab, merges):
        self.vocab = vocab  # token string -> id (specials included)
        self.id_to_token = {i: t for t, i in vocab.items()}
        self.ranks = {tuple(m): r for r, m in enumerate(merges)}
        self.special = {t: vocab[t] for t in SPECIAL_TOKENS}
        self.special_re = re.compile("|".join(re.escape(t) for t in
                                              sorted(SPECIAL_TOKENS, key=len, reverse=True)))
        self.cache = {}

    @classmethod
    def from_file(cls, path):
        j = json.load(open(path))
        return cls(j["model"]["vocab"], j["model"]["merges"])

    def _bpe(self, word):
        if word in self.cache:
            return self.cache[word]
        syms = list(word)
        while len(syms) > 1:
            best = min(range(len(syms) - 1),
                       key=lambda k: self.ranks.get((syms[k], syms[k + 1]), 1 << 30))
            pair = (syms[best], syms[best + 1])
            if pair not in self.ranks:
                break
            out, j = [], 0  # merge every occurrence of the best pair, left to right
            while j < len(syms):
                if j + 1 < len(syms) and (syms[j], syms[j + 1]) == pair:
                    out.append(syms[j] + syms[j + 1])
                    j += 2
                else:
                    out.append(syms[j])
                    j += 1
            syms = out
        ids = [self.vocab[s] for s in syms]
        self.cache[word] = ids
        return ids

    def encode(self, text):
        """encode(text, add_special_tokens=False) of the `tokenizers` library; special-token
        strings in the text become their ids (they are added tokens, matched before splitting)."""
        ids, pos = [], 0
        for m in self.special_re.finditer(text):
            for w in pretokenize(text[pos:m.start()]):
                ids += self._bpe(w)
            ids.append(self.special[m.group()])
            pos = m.end()
        for w in pretokenize(text[pos:]):
            ids += self._bpe(w)
        return ids

    def decode(self, ids):
        out, buf = [], bytearray()
        for i in ids:
            tok = self.id_to_token[i]
            if tok in self.special:
                out.append(buf.decode("utf-8", errors="replace"))
                buf = bytearray()
                out.append(tok)
            else:
                buf += bytes(CHAR_TO_BYTE[c] for c in tok)
        out.append(buf.decode("utf-8", errors="replace"))
        return "".join(out)


def build_vocab(merges):
    vocab = {c: i for i, c in enumerate(BYTE_TO_CHAR.values())}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    for t in SPECIAL_TOKENS:
        vocab[t] = len(vocab)
    return vocab


def write_tokenizer_json(path, merges):
    vocab = build_vocab(merges)
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for t in SPECIAL_TOKENS]
    j = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": GLM_SPLIT_REGEX}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [[a, b] for a, b in merges]},
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(j, f, ensure_ascii=False, indent=2)
        f.write("\n")
    return vocab


def write_tokenizer_config(path, vocab):
    """tokenizer_config.json as glm_tiny's (GLM layout; eos/pad <|endoftext|>)."""
    j = {
        "added_tokens_decoder": {str(vocab[t]): {"content": t, "lstrip": False, "normalized": False,
                                                 "rstrip": False, "single_word": False,
                                                 "special": True} for t in SPECIAL_TOKENS},
        "additional_special_tokens": SPECIAL_TOKENS[1:],
        "clean_up_tokenization_spaces": False,
        "do_lower_case": False,
        "eos_token": "<|endoftext|>",
        "extra_special_tokens": {},
        "model_input_names": ["input_ids", "attention_mask"],
        "model_max_length": 4096,
        "pad_token": "<|endoftext|>",
        "padding_side": "left",
        "remove_space": False,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(j, f, ensure_ascii=False, indent=2)
        f.write("\n")
