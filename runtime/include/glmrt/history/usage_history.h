// The expert usage a model has seen, persisted per model in
// FOLDER/<model id>/expert-usage (FOLDER: the profile's `memory.history`, else
// $XDG_CACHE_HOME/glmrt, else ~/.cache/glmrt). Counts recorded by this
// process are kept apart from what was loaded, so save() can merge them into
// whatever another process wrote meanwhile: under a lock file it re-reads the
// file, adds this process's new counts and replaces the file atomically. A
// history that cannot be used (see HistoryStatus) is ignored with one warning.
#pragma once

#include <glmrt/history/expert_usage.h>
#include <glmrt/history/history_file.h>
#include <glmrt/model/routing_observer.h>

#include <filesystem>
#include <optional>
#include <span>
#include <string>

namespace glmrt {

/// The folder histories live in: `configured` when set, else
/// $XDG_CACHE_HOME/glmrt, else $HOME/.cache/glmrt.
std::filesystem::path history_root(const std::optional<std::filesystem::path>& configured);

class UsageHistory : public RoutingObserver {
 public:
  /// Loads FOLDER/<model_id>/expert-usage for a layers x experts model
  /// (FOLDER = history_root(configured)). Never throws for a bad file.
  UsageHistory(const std::optional<std::filesystem::path>& configured, std::string model_id,
               int layers, int experts);

  /// What was loaded plus what this process recorded since.
  const ExpertUsage& totals() const { return totals_; }
  /// This process's counts not yet saved.
  const ExpertUsage& unsaved() const { return unsaved_; }
  const std::filesystem::path& file() const { return file_; }
  const std::string& model_id() const { return model_id_; }
  HistoryStatus loaded_status() const { return loaded_status_; }

  /// Counts one selection of each id in `layer`.
  void record(int layer, std::span<const int32_t> ids);
  void on_routed(int layer, int64_t, std::span<const int32_t> experts) override {
    record(layer, experts);
  }
  /// Adds counts (an imported STATS file).
  void add(const ExpertUsage& counts);

  /// Merges the unsaved counts into the file (see above). Throws
  /// glmrt::Error naming the file when it cannot be written; the counts stay
  /// unsaved then. Does nothing when there is nothing new, or when the file
  /// was written by a later glmrt (left alone, warned about once).
  void save();
  /// Removes the file (under the lock) and forgets every count.
  void reset();

 private:
  std::filesystem::path folder_;
  std::filesystem::path file_;
  std::string model_id_;
  ExpertUsage totals_, unsaved_;
  HistoryStatus loaded_status_ = HistoryStatus::missing;
  bool read_only_ = false;  // a later version's file: never overwritten
};

}  // namespace glmrt
