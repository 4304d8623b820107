#include <glmrt/base/printable.h>
#include <glmrt/score/sequence_scorer.h>
#include <glmrt/serve/completion_request.h>

namespace glmrt::serve {
namespace {

bool is_token_id(const Json& v) {
  return v.is_number_integer();
}

std::vector<int32_t> ids_of(const Json& list, const RequestContext& context,
                            const std::string& where) {
  std::vector<int32_t> ids;
  ids.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& v = list[i];
    const bool in_range = is_token_id(v) && (v.is_number_unsigned() || v.get<int64_t>() >= 0) &&
                          v.get<uint64_t>() < static_cast<uint64_t>(context.vocab_size);
    if (!in_range)
      bad_request(where, "`{}[{}]` is {}, not a token id in 0..{}", where, i,
                  v.is_primitive() ? printable(v.dump(), 64) : std::string(v.type_name()),
                  context.vocab_size - 1);
    ids.push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  return ids;
}

std::vector<int32_t> encode(const std::string& text, const RequestContext& context) {
  // As `glmrt run --prompt`: the tokenizer's special tokens, if it adds any.
  const auto ids = context.tokenizer.encode(text, true);
  return {ids.begin(), ids.end()};
}

std::vector<std::vector<int32_t>> read_prompts(const RequestFields& f,
                                               const RequestContext& context) {
  const Json* prompt = f.get("prompt");
  if (!prompt) bad_request("prompt", "`prompt` is required (text, token ids, or a list of either)");
  std::vector<std::vector<int32_t>> prompts;
  if (prompt->is_string()) {
    prompts.push_back(encode(prompt->get<std::string>(), context));
  } else if (prompt->is_array() && !prompt->empty() && is_token_id((*prompt)[0])) {
    prompts.push_back(ids_of(*prompt, context, "prompt"));
  } else if (prompt->is_array() && !prompt->empty()) {
    if (prompt->size() > static_cast<size_t>(context.limits.max_batch))
      bad_request("prompt", "`prompt` holds {} prompts; this server allows {} (--max-batch)",
                  prompt->size(), context.limits.max_batch);
    for (size_t i = 0; i < prompt->size(); ++i) {
      const Json& p = (*prompt)[i];
      const std::string where = fmt::format("prompt[{}]", i);
      if (p.is_string()) {
        prompts.push_back(encode(p.get<std::string>(), context));
      } else if (p.is_array()) {
        prompts.push_back(ids_of(p, context, where));
      } else {
        bad_request(where, "`{}` must be text or a list of token ids, found {}", where,
                    p.type_name());
      }
    }
  } else {
    bad_request("prompt",
                "`prompt` must be text, a list of token ids, or a non-empty list of either");
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string where = prompts.size() == 1 ? "prompt" : fmt::format("prompt[{}]", i);
    if (prompts[i].empty()) bad_request(where, "`{}` has no tokens", where);
    if (static_cast<int64_t>(prompts[i].size()) > context.max_context)
      throw ApiError(400, "invalid_request_error",
                     fmt::format("`{}` is {} tokens; this model's context holds {}", where,
                                 prompts[i].size(), context.max_context),
                     where, "context_length_exceeded");
  }
  return prompts;
}

}  // namespace

CompletionRequest parse_completion_request(const Json& body, const RequestContext& context) {
  const RequestFields f(body);
  CompletionRequest r;
  r.generation = read_generation_request(body, Endpoint::completions, context);
  r.prompts = read_prompts(f, context);
  r.echo = f.boolean("echo").value_or(false);
  if (auto n = f.integer("logprobs", 0, SequenceScorer::kMaxTopLogprobs))
    r.logprobs = static_cast<int>(*n);
  return r;
}

}  // namespace glmrt::serve
