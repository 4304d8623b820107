"""Token streams for training and evaluation.

The training stream is every training text (paragraphs joined by newlines) plus chat examples
made from the same texts, each followed by <|endoftext|>. A chat example renders exactly as
`glmrt template` (runtime/src/text/glm5_chat_template.cpp) renders a conversation whose user turns
are the start of a passage and whose assistant turns (thinking off: an empty <think></think>) are
its continuation:

  [gMASK]<sop><|system|>Reasoning Effort: Max<|user|>{start}<|assistant|><think></think>{cont}
  <|user|>...

ending with <|user|>, the token GLM-5 emits to hand the turn back (a stop token). The same text
is what the template produces for an earlier turn of a longer conversation, and with thinking on
the prompt ends at <think> and the model's first token is </think>, so chat works in both modes.
"""
import json
import random
import re

SENTENCE_END = re.compile(r'(?<=[.!?])\s+(?=["A-Z(])|(?<=[.!?]")\s+')
CHAT_HEAD = "[gMASK]<sop><|system|>Reasoning Effort: Max"


def load_docs(path):
    return [json.loads(line) for line in open(path)]


def doc_text(doc):
    return "\n".join(doc["paragraphs"])


def sentences(paragraph):
    return [s.strip() for s in SENTENCE_END.split(paragraph) if s.strip()]


def chat_turn(user, answer):
    return f"<|user|>{user.strip()}<|assistant|><think></think>{answer.strip()}"


def chat_examples(docs, rng, per_doc):
    """Up to per_doc conversations per text: 1-2 turns, each a passage start and its
    continuation taken from one paragraph."""
    out = []
    for doc in docs:
        paras = [sentences(p) for p in doc["paragraphs"]]
        paras = [p for p in paras if len(p) >= 3]
        rng.shuffle(paras)
        k = 0
        while paras and k < per_doc:
            turns = []
            for _ in range(rng.choice((1, 1, 2))):
                if not paras:
                    break
                s = paras.pop()
                n_user = rng.randint(1, min(2, len(s) - 1))
                n_answer = rng.randint(1, min(4, len(s) - n_user))
                turns.append(chat_turn(" ".join(s[:n_user]),
                                       " ".join(s[n_user:n_user + n_answer])))
            out.append(CHAT_HEAD + "".join(turns) + "<|user|>")
            k += 1
    return out


def build_stream(tok, docs, seed, chat_per_doc):
    """Token ids of the training stream (texts and chats interleaved in a seeded order)."""
    rng = random.Random(seed)
    pieces = [doc_text(d) for d in docs] + chat_examples(docs, rng, chat_per_doc)
    rng.shuffle(pieces)
    eot = tok.special["<|endoftext|>"]
    ids, chat_tokens = [], 0
    for p in pieces:
        e = tok.encode(p)
        if p.startswith(CHAT_HEAD):
            chat_tokens += len(e)
        ids += e + [eot]
    return ids, chat_tokens
