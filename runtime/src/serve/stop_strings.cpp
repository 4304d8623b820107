#include <glmrt/serve/held_text.h>
#include <glmrt/serve/stop_strings.h>

#include <algorithm>
#include <utility>

namespace glmrt::serve {

StopStringFilter::StopStringFilter(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopStringFilter::push(std::string_view piece) {
  if (stopped_) return {};
  pending_ += piece;
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) {
    const size_t at = pending_.find(stop);
    if (at < first) {
      first = at;
      matched_ = stop;
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string before = pending_.substr(0, first);
    pending_.clear();
    return before;
  }
  size_t hold = 0;
  for (const std::string& stop : stops_)
    hold = std::max(hold, partial_marker_length(pending_, stop));
  std::string ready = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return ready;
}

std::string StopStringFilter::flush() {
  if (stopped_) return {};
  return std::exchange(pending_, {});
}

}  // namespace glmrt::serve
