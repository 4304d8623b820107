#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/seed-*).

Seeds are small versions of the real inputs, taken from the fixtures:
tests/fixtures/glm_tiny (config, tokenizer, ref.json), tests/fixtures/tokenizer
(the Qwen3 and DeepSeek-V3 tokenizers, the GLM-5 chat renders) and configs/.
Reproducers found by fuzzing (regression-*) live beside them and are kept.

    python3 fuzz/make_seeds.py      # rewrites every seed-* file
"""
import json
import pathlib
import struct

REPO = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
CORPUS = REPO / "fuzz" / "corpus"
FILE_SEPARATOR = b"\n%%%% "  # fuzz_model_dir's file separator

written = {}


def seed(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    written.setdefault(target, set()).add(f"seed-{name}")
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"seed-{name}").write_bytes(data)


def dumps(value, indent=None):
    return json.dumps(value, ensure_ascii=False, indent=indent)


# --- safetensors ---------------------------------------------------------

DTYPES = {"F64": ("d", 8), "F32": ("f", 4), "F16": ("e", 2), "I64": ("q", 8), "I32": ("i", 4),
          "I16": ("h", 2), "I8": ("b", 1), "U8": ("B", 1), "BOOL": ("?", 1)}


def tensor_bytes(dtype, count, start):
    if dtype == "BF16":  # top half of the f32 bits
        return b"".join(struct.pack("<f", start + i * 0.25)[2:] for i in range(count))
    if dtype in ("F8_E4M3", "F8_E5M2"):
        return bytes((0x38 + i) & 0xFF for i in range(count))
    code, _ = DTYPES[dtype]
    if code in "fde":
        return b"".join(struct.pack("<" + code, start + i * 0.5) for i in range(count))
    if code == "?":
        return bytes(i % 2 for i in range(count))
    return b"".join(struct.pack("<" + code, (i * 3) % 100 - (50 if code.islower() else 0))
                    for i in range(count))


def safetensors(tensors, metadata=None):
    """tensors: [(name, dtype, shape)]; data laid out in order."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for i, (name, dtype, shape) in enumerate(tensors):
        count = 1
        for dim in shape:
            count *= dim
        payload = tensor_bytes(dtype, count, float(i))
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # writers pad the header to 8 bytes
    return struct.pack("<Q", len(text)) + text + data


GLM_TENSORS = [
    ("model.embed_tokens.weight", "BF16", [8, 4]),
    ("model.layers.0.input_layernorm.weight", "F32", [4]),
    ("model.layers.0.self_attn.kv_a_proj_with_mqa.weight", "F32", [3, 4]),
    ("model.layers.0.mlp.gate.e_score_correction_bias", "F32", [2]),
    ("model.layers.1.mlp.experts.0.down_proj.weight", "F16", [2, 2]),
    ("lm_head.weight", "BF16", [8, 4]),
]
MIXED = [("f64", "F64", [2]), ("f32", "F32", [2, 3]), ("bf16", "BF16", [4]), ("f16", "F16", [2, 2]),
         ("i64", "I64", [1]), ("i32", "I32", [2]), ("i16", "I16", [2]), ("i8", "I8", [3]),
         ("u8", "U8", [2]), ("bool", "BOOL", [2]), ("f8", "F8_E4M3", [2]), ("f8b", "F8_E5M2", [1]),
         ("empty", "F32", [0, 3]), ("scalar", "F32", [])]

seed("safetensors", "glm-layout.safetensors", safetensors(GLM_TENSORS, {"format": "pt"}))
seed("safetensors", "all-dtypes.safetensors", safetensors(MIXED))
seed("safetensors", "no-tensors.safetensors", safetensors([], {"format": "pt"}))

shard1, shard2 = GLM_TENSORS[:3], GLM_TENSORS[3:]
names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
index = {"metadata": {"total_size": 0},
         "weight_map": {**{t[0]: names[0] for t in shard1}, **{t[0]: names[1] for t in shard2}}}
seed("model_dir", "sharded", dumps(index, 2).encode() + FILE_SEPARATOR + names[0].encode() + b"\n" +
     safetensors(shard1) + FILE_SEPARATOR + names[1].encode() + b"\n" + safetensors(shard2))
seed("model_dir", "single", FILE_SEPARATOR[1:] + b"model.safetensors\n" + safetensors(MIXED[:4]))
seed("model_dir", "only-file", FILE_SEPARATOR[1:] + b"weights.safetensors\n" +
     safetensors(GLM_TENSORS[:2]))

# --- GGUF ----------------------------------------------------------------
# Files laid out as llama.cpp writes them (little-endian): header, pairs,
# tensor infos, the data section at the alignment, each tensor aligned.

GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
                12: "d"}
GGUF_TYPES = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q8_0": (8, 32, 34),
              "Q4_K": (12, 256, 144), "IQ2_XXS": (16, 256, 66), "IQ4_NL": (20, 32, 18),
              "BF16": (30, 1, 2), "MXFP4": (39, 32, 17)}


def gguf_string(text):
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(data)) + data


def gguf_value(kind, value):
    """kind: a scalar type id, 8 (string), or ("array", element kind)."""
    if kind == 8:
        return gguf_string(value)
    if isinstance(kind, tuple):
        element = kind[1]
        element_id = 9 if isinstance(element, tuple) else element
        return struct.pack("<IQ", element_id, len(value)) + b"".join(
            gguf_value(element, v) for v in value)
    return struct.pack("<" + GGUF_SCALARS[kind], value)


def gguf(pairs, tensors, version=3, alignment=32):
    """pairs: [(key, kind, value)]; tensors: [(name, type, dims)], data filled with a pattern."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(pairs))
    for key, kind, value in pairs:
        out += gguf_string(key) + struct.pack("<I", 9 if isinstance(kind, tuple) else kind)
        out += gguf_value(kind, value)
    data = b""
    for i, (name, type_name, dims) in enumerate(tensors):
        type_id, block, block_bytes = GGUF_TYPES[type_name]
        rows = 1
        for dim in dims[1:]:
            rows *= dim
        size = dims[0] // block * block_bytes * rows
        out += gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<q", d) for d in dims)
        out += struct.pack("<IQ", type_id, len(data))
        data += bytes((i * 7 + j) % 251 for j in range(size))
        data += b"\0" * (-len(data) % alignment)
    out += b"\0" * (-len(out) % alignment)
    return out + data


EVERY_KIND = [("general.architecture", 8, "glm-dsa"), ("u8", 0, 200), ("i8", 1, -100),
              ("u16", 2, 60000), ("i16", 3, -30000), ("u32", 4, 4000000000), ("i32", 5, -7),
              ("f32", 6, 0.5), ("bool", 7, True), ("u64", 10, 1 << 40), ("i64", 11, -(1 << 40)),
              ("f64", 12, 1e-300), ("ints", ("array", 5), [1, -2, 3]),
              ("flags", ("array", 7), [True, False]), ("floats", ("array", 6), [0.5, -1.0]),
              ("words", ("array", 8), ["a", "", "caf\u00e9"]),
              ("nested", ("array", ("array", 4)), [[1, 2], [], [3]])]
seed("gguf", "every-kind.gguf", gguf(EVERY_KIND, [
    ("f32", "F32", [4, 2]), ("f16", "F16", [8]), ("bf16", "BF16", [2, 2]), ("q4_0", "Q4_0", [32, 2]),
    ("q8_0", "Q8_0", [64]), ("q4_k", "Q4_K", [256]), ("iq2", "IQ2_XXS", [256]),
    ("mxfp4", "MXFP4", [32, 1, 2]), ("empty", "F32", [0, 3])]))
DEEPSEEK_KEYS = [("general.architecture", 8, "deepseek2"), ("deepseek2.block_count", 4, 2),
                 ("deepseek2.expert_count", 4, 8), ("deepseek2.rope.scaling.type", 8, "yarn"),
                 ("deepseek2.rope.scaling.factor", 6, 4.0),
                 ("deepseek2.expert_weights_norm", 7, True),
                 ("tokenizer.ggml.model", 8, "gpt2"),
                 ("tokenizer.ggml.tokens", ("array", 8), [f"<t{i}>" for i in range(8)]),
                 ("tokenizer.ggml.token_type", ("array", 5), [1] * 8),
                 ("tokenizer.ggml.merges", ("array", 8), ["<t 0>"])]
DEEPSEEK_TENSORS = [("token_embd.weight", "Q4_0", [32, 8]), ("output_norm.weight", "F32", [32]),
                    ("blk.0.attn_k_b.weight", "IQ4_NL", [32, 2, 2]),
                    ("blk.1.ffn_up_exps.weight", "Q8_0", [32, 2, 4])]
seed("gguf", "deepseek-like.gguf", gguf(DEEPSEEK_KEYS, DEEPSEEK_TENSORS))
seed("gguf", "v2-aligned-64.gguf", gguf([("general.alignment", 4, 64)] + DEEPSEEK_KEYS[:3],
                                         DEEPSEEK_TENSORS[:2], version=2, alignment=64))
seed("gguf", "vocab-only.gguf", gguf(DEEPSEEK_KEYS[:1] + DEEPSEEK_KEYS[6:], []))
shards = []
for no in range(3):
    keys = [("split.no", 2, no), ("split.count", 2, 3), ("split.tensors.count", 5, 4)]
    if no == 0:
        keys = DEEPSEEK_KEYS[:3] + keys
    part = DEEPSEEK_TENSORS[:2] if no == 0 else DEEPSEEK_TENSORS[1 + no:2 + no]
    shards.append(FILE_SEPARATOR[1:] + f"m-{no + 1:05}-of-00003.gguf\n".encode() +
                  gguf(keys, part))
seed("gguf", "split", b"\n".join(shards))

# --- config.json ---------------------------------------------------------

config = json.loads((FIXTURES / "glm_tiny" / "config.json").read_text())
seed("model_config", "glm_tiny.json", dumps(config, 2))
variant = dict(config)
for key in ("mlp_layer_types", "indexer_types", "rope_parameters"):
    variant.pop(key)
variant.update({"first_k_dense_replace": 1, "moe_layer_freq": 1, "index_topk_freq": 2,
                "index_skip_topk_offset": 1, "rope_theta": 50000.0, "n_group": 4, "topk_group": 2,
                "eos_token_id": 1010, "rope_scaling": None})
seed("model_config", "deepseek-style.json", dumps(variant, 2))
variant = dict(config)
variant.pop("indexer_types")
variant.update({"index_topk_pattern": "FSFS", "rope_parameters": {"rope_type": "default"},
                "rope_scaling": {"type": "default"}, "num_nextn_predict_layers": 2})
seed("model_config", "topk-pattern.json", dumps(variant))
variant = dict(config)
variant["quantization_config"] = {"quant_method": "fp8"}
seed("model_config", "quantized.json", dumps(variant))
# The other kinds: DeepSeek-V3 (YaRN rope_scaling, no indexer), without the q LoRA, and V3.2.
for name in ("deepseek_tiny", "deepseek_v3_bf16", "deepseek_v32_tiny"):
    seed("model_config", f"{name}.json", (FIXTURES / name / "config.json").read_text())

# --- profiles ------------------------------------------------------------

for profile in sorted((REPO / "configs").glob("*.yaml")):
    seed("profile", profile.name, profile.read_bytes())
seed("profile", "every-key.yaml", """\
model: ../models/glm_tiny
plugin_paths: [plugins, /opt/glmrt/plugins]
plugins:
  kernels: {name: kernels-avx2, settings: {tile: 64, prefetch: "true"}}
  io: ./libglmrt-io-odirect.so
  draft: {name: draft-ngram, settings: {min_match: 2}}
  max_draft_tokens: 8
threads: 4
precision: {dense: bf16, experts: 2, kv_cache: 16}
memory: {budget: 1.5GiB, expert_cache: 0, max_context: 16}
generation:
  temperature: 1.2
  top_p: 1
  top_k: 0
  min_p: 0.05
  repetition_penalty: 1.1
  presence_penalty: -0.5
  seed: 18446744073709551615
  max_new_tokens: 1
validate: {min_top1: 0.5, max_kl: 1e-3, max_dlogit: 1e-1, min_margin: 0, greedy_identical: false}
""")

# --- tokenizers ----------------------------------------------------------


def trimmed_tokenizer(path, merges_kept, added_kept):
    """The file's components with a vocabulary cut to what its first merges need."""
    tok = json.loads(path.read_text())
    model = tok["model"]
    merges = model["merges"][:merges_kept]
    pairs = [m.split(" ", 1) if isinstance(m, str) else m for m in merges]
    needed = {t for t, i in model["vocab"].items() if len(t) == 1}
    for left, right in pairs:
        needed.update((left, right, left + right))
    model["vocab"] = {t: i for t, i in model["vocab"].items() if t in needed}
    model["merges"] = merges
    tok["added_tokens"] = tok["added_tokens"][:added_kept]
    return tok


TEXT = "Hello, world! 123 4567 caf\u00e9 \u4f60\u597d \U0001F600 <|user|>x\n\tend"
TOKENIZERS = FIXTURES / "tokenizer"
glm = trimmed_tokenizer(TOKENIZERS / "glm_tiny" / "tokenizer.json", 120, 40)
seed("tokenizer", "glm_tiny.json", dumps(glm))
seed("tokenizer", "glm_tiny-text.json", dumps(glm) + "\0" + TEXT)
qwen = trimmed_tokenizer(TOKENIZERS / "qwen3" / "tokenizer.json", 60, 12)
seed("tokenizer", "qwen3.json", dumps(qwen) + "\0" + "cafe\u0301 naive\u0308 I'm here")
deepseek = trimmed_tokenizer(TOKENIZERS / "deepseek_v3" / "tokenizer.json", 60, 12)
seed("tokenizer", "deepseek_v3.json", dumps(deepseek) + "\0" + "x = 12345; // \u00fcber")

# Components the real files do not use, on the glm_tiny vocabulary.
special = {"id": "[gMASK]", "type_id": 0}
variant = dict(glm)
variant["normalizer"] = {"type": "Sequence", "normalizers": [
    {"type": "NFKC"}, {"type": "Lowercase"}, {"type": "Strip", "strip_left": True,
                                              "strip_right": False},
    {"type": "Replace", "pattern": {"String": "  "}, "content": " "}, {"type": "Prepend",
                                                                       "prepend": " "}]}
variant["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
    {"type": "Digits", "individual_digits": True},
    {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": False},
    {"type": "ByteLevel", "add_prefix_space": True, "use_regex": True}]}
variant["post_processor"] = {"type": "TemplateProcessing",
                             "single": [{"SpecialToken": special}, {"Sequence": {"id": "A",
                                                                                 "type_id": 0}}],
                             "special_tokens": {"[gMASK]": {"id": "[gMASK]", "ids": [1012],
                                                            "tokens": ["[gMASK]"]}}}
variant["decoder"] = {"type": "Sequence", "decoders": [
    {"type": "ByteLevel"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
seed("tokenizer", "components.json", dumps(variant) + "\0" + "  The YEAR 2024 \uff21\uff22 ok")
variant = dict(glm)
variant["normalizer"] = {"type": "NFD"}
variant["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "\\s+|(?i:'s)"},
                            "behavior": "Contiguous", "invert": True}
variant["post_processor"] = {"type": "Sequence", "processors": [
    {"type": "ByteLevel"}, {"type": "BertProcessing", "sep": ["<|user|>", 1017],
                            "cls": ["[gMASK]", 1012]}]}
seed("tokenizer", "bert.json", dumps(variant) + "\0" + "it's  A\u0301 test")

# SentencePiece-style byte fallback (as Llama files spell it).
vocab = {"<unk>": 0, **{f"<0x{b:02X}>": 1 + b for b in range(256)}}
for piece in ["\u2581", "a", "b", "c", "\u2581a", "ab", "\u2581ab", "\u2581c"]:
    vocab[piece] = len(vocab)
spm = {"version": "1.0", "truncation": None, "padding": None,
       "added_tokens": [{"id": 0, "content": "<unk>", "special": True},
                        {"id": len(vocab), "content": "<s>", "special": True, "lstrip": True,
                         "rstrip": True, "single_word": True, "normalized": False}],
       "normalizer": {"type": "Sequence", "normalizers": [
           {"type": "Prepend", "prepend": "\u2581"},
           {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
       "pre_tokenizer": None,
       "post_processor": {"type": "RobertaProcessing", "sep": ["<s>", len(vocab)],
                          "cls": ["<s>", len(vocab)]},
       "decoder": {"type": "Sequence", "decoders": [
           {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
           {"type": "ByteFallback"}, {"type": "Fuse"},
           {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
       "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "fuse_unk": True,
                 "byte_fallback": True, "vocab": vocab,
                 "merges": ["\u2581 a", "a b", "\u2581a b", "\u2581 c"]}}
seed("tokenizer", "byte-fallback.json", dumps(spm) + "\0" + "ab c abc \u00e9<s> x")
wordpiece_like = {"added_tokens": [], "model": {
    "vocab": {"a": 0, "b": 1, "##a": 2, "##b": 3, "ab": 4, "ab</w>": 5, "a</w>": 6, "b</w>": 7,
              "[UNK]": 8},
    "merges": [["a", "##b"], ["a", "b</w>"]], "unk_token": "[UNK]",
    "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>", "ignore_merges": True}}
seed("tokenizer", "no-type-bpe.json", dumps(wordpiece_like) + "\0" + "ab ba abab c")

# --- chat requests -------------------------------------------------------

rows = [json.loads(line) for line in (TOKENIZERS / "chat" / "renders.jsonl").open()]
for row in rows:
    if row["template"] != "glm-5.3-flash":
        continue
    options = dict(row["options"])
    request = {"messages": row["messages"]}
    if "tools" in options:
        request["tools"] = options.pop("tools")
    request["chat_template_kwargs"] = options
    seed("chat_request", row["conversation"] + ".json", dumps(request))
seed("chat_request", "string-arguments.json", dumps({
    "messages": [{"role": "user", "content": "weather?"},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": "c1", "type": "function", "function": {
                         "name": "get_weather",
                         "arguments": "{\"city\": \"Paris\", \"days\": [1, 2.5, null, true]}"}}]},
                 {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "strict": True,
                                                "parameters": {"type": "object"}}},
              {"type": "function", "defer_loading": True, "function": {"name": "hidden"}}],
    "add_generation_prompt": False, "enable_thinking": False, "reasoning_effort": "high",
    "clear_thinking": True}))

# --- chat templates ------------------------------------------------------
# The engine's construct templates (glmrt's own, with Python Jinja2's renders
# in tests/fixtures/chat_templates/constructs.jsonl), each alone and with its
# variables as the request's chat_template_kwargs.
for i, line in enumerate((FIXTURES / "chat_templates" / "constructs.jsonl").open()):
    row = json.loads(line)
    seed("chat_template", f"construct-{i:02d}", row["template"])
    request = {"messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": row["vars"]}
    seed("chat_template", f"construct-{i:02d}-vars", row["template"].encode() + b"\0" +
         dumps(request).encode())

# --- serve requests ------------------------------------------------------
# Bodies of /v1/chat/completions, /v1/completions, /v1/messages and
# /v1/responses as clients send them;
# each line is also read as a `glmrt score` request.

seed("serve_request", "chat-streamed.json", dumps({
    "model": "gpt-4o", "messages": [{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": "Hello"}],
    "stream": True, "stream_options": {"include_usage": True}, "temperature": 0.7, "top_p": 0.9,
    "top_k": 40, "min_p": 0.05, "max_completion_tokens": 32, "stop": ["\n\n", "END"],
    "seed": 7, "presence_penalty": 0.5, "frequency_penalty": -0.5, "logprobs": True,
    "top_logprobs": 3, "user": "u1", "metadata": {"k": "v"}, "n": 1,
    "response_format": {"type": "text"}, "chat_template_kwargs": {"enable_thinking": False}}))
seed("serve_request", "chat-tools.json", dumps({
    "messages": [{"role": "user", "content": "weather in Paris?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}}],
    "tool_choice": "auto", "max_tokens": 16, "thinking": {"type": "disabled"}}))
seed("serve_request", "chat-json-schema.json", dumps({
    "messages": [{"role": "user", "content": "a customer"}], "max_tokens": 64,
    "response_format": {"type": "json_schema", "json_schema": {"name": "customer", "strict": True,
        "schema": {"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 8},
            "age": {"type": "integer", "minimum": 18, "exclusiveMaximum": 100},
            "score": {"type": ["number", "null"], "minimum": -1.5, "maximum": 2.25},
            "tags": {"type": "array", "items": {"enum": ["a", "b", 3, None]}, "maxItems": 2},
            "extra": {"type": "object", "additionalProperties": {"type": "boolean"}},
            "kind": {"const": {"k": [1, True]}}},
        "required": ["name", "age"], "additionalProperties": False}}}}))
seed("serve_request", "completion-json-object.json", dumps({
    "prompt": "x", "max_tokens": 8, "response_format": {"type": "json_object"}}))
seed("serve_request", "completion-echo-batch.json", dumps({
    "model": "glm", "prompt": [[1, 2, 3, 4], [5, 6, 7]], "echo": True, "logprobs": 1,
    "max_tokens": 0, "temperature": 0}))
seed("serve_request", "completion-text.json", dumps({
    "prompt": ["The capital of France is", "caf\u00e9 <|user|>"], "max_tokens": 8, "stream": True,
    "ignore_eos": True, "best_of": 1, "suffix": "", "logit_bias": {}}))
# /v1/messages and /v1/responses bodies, read as those endpoints read them too.
seed("serve_request", "messages-tools.json", dumps({
    "model": "claude", "max_tokens": 16, "system": [{"type": "text", "text": "Be brief.",
                                                     "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "t", "signature": ""},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
            {"type": "text", "text": "And tomorrow?"}]}],
    "tools": [{"name": "weather", "input_schema": {"type": "object", "properties": {
        "city": {"type": "string"}}}}],
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    "stop_sequences": ["END"], "stream": True, "thinking": {"type": "adaptive"},
    "output_config": {"effort": "low"}}))
seed("serve_request", "responses-items.json", dumps({
    "model": "gpt-5", "instructions": "Be brief.",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "t"}]},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"}],
    "tools": [{"type": "function", "name": "weather", "parameters": {"type": "object"}}],
    "max_output_tokens": 16, "reasoning": {"effort": "low", "summary": "auto"}, "store": False,
    "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}}}))
seed("serve_request", "score-lines.txt",
     "3 2 10 11 12 13 14\n"
     + dumps({"context": "The capital of France is", "continuation": " Paris"}) + "\n"
     + dumps({"context": [1, 2, 3], "continuation": [4, 5]}) + "\n")

# --- HTTP framing --------------------------------------------------------
# What clients send `glmrt serve` before any handler runs: heads, bodies by
# Content-Length or chunked, pipelined requests; chunked bodies alone behind a
# byte that sets the limit (limit = 4 x its value).

seed("request_framing", "get-health.http",
     "GET /health HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/8.5\r\nAccept: */*\r\n\r\n")
seed("request_framing", "post-then-pipelined-get.http",
     "POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
     "Content-Length: 32\r\n\r\n{\"prompt\": [1], \"max_tokens\": 1}"
     "\r\nGET /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
seed("request_framing", "chunked-with-trailer.http",
     "POST /v1/chat/completions HTTP/1.1\r\nHost: [::1]:8080\r\nTransfer-Encoding: chunked\r\n"
     "Expect: 100-continue\r\n\r\n5\r\n{\"a\":\r\n6;ext=1\r\n 1}    \r\n0\r\nX-Trailer: t\r\n\r\n"
     "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
seed("request_framing", "lf-only-http10.http",
     "\r\n\r\nGET /metrics HTTP/1.0\nX-Forwarded-For: a, b\n\n")
seed("request_framing", "conflicting-lengths.http",
     "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")
seed("chunked_body", "two-chunks-trailer.bin",
     b"\xff5\r\nhello\r\n6;name=value\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT")
seed("chunked_body", "lf-only.bin", b"\x10" + b"3\nabc\n0\n\n")
seed("chunked_body", "over-the-limit.bin", b"\x01" + b"a\r\n0123456789\r\n0\r\n\r\n")
seed("chunked_body", "malformed-size.bin", b"\x40" + b"zz\r\nab\r\n")

# --- ref.json ------------------------------------------------------------

ref = json.loads((FIXTURES / "glm_tiny" / "ref.json").read_text())
VOCAB_KEPT = 6


def small_case(case, positions):
    prompt = case["prompt_ids"][:3]
    full = case["full_ids"][:positions]
    small = {"name": case["name"], "prompt_ids": prompt, "max_new_tokens": positions - len(prompt),
             "generated_ids": full[len(prompt):], "full_ids": full,
             "prompt_dense_equivalent": True, "dense_equivalent": True, "sparse_rows_from": 8,
             "tf_pred": [p % VOCAB_KEPT for p in case["tf_pred"][:positions]],
             "margin": case["margin"][:positions],
             "logits": [row[:VOCAB_KEPT] for row in case["logits"][:positions]]}
    if "mtp_pred" in case:
        small["mtp_pred"] = case["mtp_pred"][:positions - 1]
        small["mtp_margin"] = case["mtp_margin"][:positions - 1]
    small["experts"] = {layer: rows[:positions] for layer, rows in
                        list(case.get("experts", {}).items())[:1]}
    small["indexer_topk"] = {}
    return small


seed("oracle", "ref.json", dumps({"about": {"produced_by": "fuzz/make_seeds.py from glm_tiny"},
                                  "cases": [small_case(c, 5) for c in ref["cases"][:2]]}, 1))
no_mtp = small_case(ref["cases"][2], 4)
no_mtp.pop("mtp_pred"), no_mtp.pop("mtp_margin")
seed("oracle", "no-mtp.json", dumps({"cases": [no_mtp]}))

# Stale seeds of an earlier run go; reproducers (regression-*) stay.
for target, names in written.items():
    for old in (CORPUS / target).glob("seed-*"):
        if old.name not in names:
            old.unlink()

# --- dictionaries --------------------------------------------------------
# libFuzzer splices these words into inputs: every identifier-like string
# literal of the sources that read the format, plus the format's punctuation.

import re

RUNTIME = REPO / "runtime" / "src"
JSON_PUNCTUATION = ["{", "}", "[", "]", ":", ",", "null", "true", "false", "-1", "0", "0.5", "1e308",
                    "2147483647", "-2147483648", "4294967295", "4294967296", "9223372036854775807",
                    "18446744073709551615", "\\u0000", "\\ud83d\\ude00"]
YAML_PUNCTUATION = [": ", "- ", "{", "}", "[", "]", "---", "...", "&a", "*a", "<<: *a", "!!str",
                    "!!map", "|", ">", "~", "null", "true", "false", ".nan", ".inf", "0x10", "1e3",
                    "#", "2147483647", "18446744073709551616", "-0", "1.5e-320"]


def literals(*patterns):
    words = set()
    for pattern in patterns:
        for source in sorted(RUNTIME.glob(pattern)):
            words.update(re.findall(r'"([A-Za-z_][A-Za-z0-9_.<>|/-]{1,40})"', source.read_text()))
    return sorted(words)


def write_dict(target, words, quoted, raw=()):
    lines = ['"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"' for word in raw]
    for word in words:
        text = f'"{word}"' if quoted else word
        lines.append('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
    for word in (JSON_PUNCTUATION if quoted else YAML_PUNCTUATION):
        lines.append('"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"')
    folder = REPO / "fuzz" / "dict"
    folder.mkdir(exist_ok=True)
    (folder / f"{target}.dict").write_text(
        "# Generated by fuzz/make_seeds.py from the runtime's sources.\n" + "\n".join(lines) + "\n")


SAFETENSORS = literals("model_files/safetensors*.cpp", "model_files/dtype*.cpp") + [
    "__metadata__", "weight_map", "F8_E4M3", "F8_E5M2", "BOOL"]
write_dict("safetensors", SAFETENSORS, True)
write_dict("model_dir", SAFETENSORS + ["model.safetensors", "model.safetensors.index.json",
                                       "..", "/"], True)
write_dict("model_config", literals("model_files/model_config.cpp", "model_files/config_*.cpp",
                                    "model_files/model_kind.cpp"),
           True)
write_dict("profile", literals("profile/*.cpp"), False)
write_dict("tokenizer", literals("text/tokenizer.cpp", "text/bpe_model.cpp", "text/normalizer.cpp",
                                 "text/pre_tokenizer.cpp", "text/post_processor.cpp",
                                 "text/decoder.cpp", "text/added_vocabulary.cpp",
                                 "text/component_json.h"), True)
write_dict("chat_request", literals("text/glm5_chat_template.cpp", "text/python_values.cpp",
                                    "text/text_commands.cpp"), True,
           raw=["<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "<arg_value>",
                "<|user|>", "<|assistant|>", "<|system|>", "<|observation|>", "\\n", "\\u00e9"])
write_dict("chat_template", literals("text/jinja_parser.cpp", "text/jinja_expression_parser.cpp",
                                     "text/jinja_filters.cpp", "text/jinja_tests.cpp",
                                     "text/jinja_methods.cpp", "text/jinja_globals.cpp"), True,
           raw=["{{", "}}", "{%", "%}", "{%-", "-%}", "{#", "#}", "for", "in", "if", "elif",
                "else", "endif", "endfor", "set", "endset", "macro", "endmacro", "call",
                "endcall", "namespace", "loop.index0", "messages", "tools", "is", "not", "and",
                "or", "~", "|", "[::-1]"])
write_dict("serve_request", literals("serve/*request*.cpp", "serve/request_fields.cpp") + [
    "messages", "prompt", "role", "content", "system", "user", "assistant", "tool", "tools",
    "stream", "stream_options", "include_usage", "max_tokens", "max_completion_tokens", "echo",
    "logprobs", "top_logprobs", "temperature", "top_p", "top_k", "min_p", "seed", "stop",
    "presence_penalty", "frequency_penalty", "repetition_penalty", "n", "best_of",
    "response_format", "chat_template_kwargs", "enable_thinking", "context", "continuation"],
    True)
# HTTP's words as bytes: control characters written as \xNN escapes.
HTTP_WORDS = ["GET", "POST", "OPTIONS", "HTTP/1.1", "HTTP/1.0", "Host: ", "Content-Length: ",
              "Transfer-Encoding: ", "chunked", "Connection: ", "close", "keep-alive", "Expect: ",
              "100-continue", "Origin: ", "Content-Type: ", "application/json", "/v1/completions",
              "/health", "ffffffffffffff", "1000000000000000", "18446744073709551616", "\r\n",
              "\r\n\r\n", "\n\n", ", ", ";", " ", "\t", "0\r\n\r\n", "\x00", "\x7f", "\r"]


def write_bytes_dict(target, words):
    def escaped(word):
        return "".join(c if 0x20 <= ord(c) < 0x7F and c not in '\\"' else f"\\x{ord(c):02X}"
                       for c in word)
    (REPO / "fuzz" / "dict" / f"{target}.dict").write_text(
        "# Generated by fuzz/make_seeds.py.\n" + "".join(f'"{escaped(w)}"\n' for w in words))


write_bytes_dict("request_framing", HTTP_WORDS)
write_bytes_dict("chunked_body", ["0", "1", "a", "F", "ffffffffffffff", "1000000000000000",
                                  ";ext=1", "\r\n", "\n", "0\r\n\r\n", "Trailer: x\r\n"])
write_bytes_dict("gguf", [
    "GGUF", "\x02\x00\x00\x00", "\x03\x00\x00\x00", "\x00\x00\x00\x03", "\x20\x00\x00\x00",
    "\x09\x00\x00\x00", "\x08\x00\x00\x00", "\x07\x00\x00\x00", "\x0c\x00\x00\x00",
    "\x00\x00\x00\x00\x00\x00\x00\x00", "\xff\xff\xff\xff\xff\xff\xff\xff",
    "\xff\xff\xff\xff\xff\xff\xff\x7f", "general.alignment", "general.architecture",
    "split.no", "split.count", "split.tensors.count", "tokenizer.ggml.tokens", ".weight",
    "-00001-of-00002.gguf", "-00002-of-00002.gguf", "\n%%%% "])
write_dict("oracle", literals("validate/oracle_file.cpp") + [
    "cases", "name", "prompt_ids", "generated_ids", "full_ids", "tf_pred", "margin", "logits",
    "dense_equivalent", "sparse_rows_from", "mtp_pred", "mtp_margin", "experts", "indexer_topk"],
    True)
