#include "yaml_documents.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>

namespace glmrt::yaml_strict {
namespace {

/// Keeps where a document's first node is; builds nothing.
class FirstNodeMark : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> mark;

  void OnDocumentStart(const YAML::Mark& at) override { document_start_ = at; }
  void OnDocumentEnd() override {
    if (!mark) mark = document_start_;
  }
  void OnNull(const YAML::Mark& at, YAML::anchor_t) override { note(at); }
  void OnAlias(const YAML::Mark& at, YAML::anchor_t) override { note(at); }
  void OnScalar(const YAML::Mark& at, const std::string&, YAML::anchor_t,
                const std::string&) override {
    note(at);
  }
  void OnSequenceStart(const YAML::Mark& at, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    note(at);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& at, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    note(at);
  }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& at) {
    if (!mark) mark = at;
  }
  YAML::Mark document_start_;
};

}  // namespace

std::optional<YAML::Mark> second_document(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  FirstNodeMark first;
  if (!parser.HandleNextDocument(first)) return std::nullopt;
  FirstNodeMark second;
  if (!parser.HandleNextDocument(second)) return std::nullopt;
  return second.mark;
}

}  // namespace glmrt::yaml_strict
