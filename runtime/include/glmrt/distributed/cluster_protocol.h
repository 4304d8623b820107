// What rank 0 and the expert ranks say to each other (docs/distributed.md).
// Rank 0 sends requests on kToWorker; a rank answers on kToRoot. Per model:
// open (paths) -> hello (who the rank is), assign (the shards) -> ready;
// then one step per MoE layer and step -> its sums; stats -> counters;
// close ends the model, stop the rank.
#pragma once

#include <glmrt/distributed/byte_message.h>
#include <glmrt/distributed/model_manifest.h>
#include <glmrt/experts/expert_store_stats.h>
#include <glmrt/model/router.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace glmrt::cluster {

inline constexpr int kToWorker = 17;
inline constexpr int kToRoot = 18;

enum class Op : uint32_t { open = 1, assign, step, stats, close, stop, prefetch };
enum class Wire : uint8_t { f32 = 0, bf16 = 1 };
const char* wire_name(Wire wire);

struct Open {
  std::string profile_path, model_dir;
  bool verify = false;  // `--verify`: the rank checks its own files against its checksums.json
};
/// A rank's answer to open: who it is, or why it cannot run the model.
struct Hello {
  std::string error;  // empty when the rank opened the model's files
  std::string version, host, model_dir, model_id;
  std::vector<std::pair<std::string, std::string>> profile_keys;
  std::vector<ManifestEntry> manifest;  // its files' sizes and listed checksums
};
struct Assign {
  int32_t rows = 0, experts = 0, ranks = 0;
  std::vector<int16_t> owners;
};
struct Ready {
  std::string error;
  int32_t experts_owned = 0;
  uint64_t fingerprint = 0;
};
/// One MoE step for one rank: the rows of the positions that chose one of
/// its experts, those choices (ids ascending within a row), and the next
/// layer's predicted experts it owns.
struct Step {
  uint64_t sequence = 0;
  int32_t layer = 0, next_layer = -1;
  Wire wire = Wire::f32;
  std::vector<int32_t> counts;  // choices per row
  std::vector<int32_t> ids;
  std::vector<float> weights;
  std::vector<int32_t> predicted;
  std::vector<float> rows;  // [counts.size(), hidden], as decoded
};
struct Sums {
  uint64_t sequence = 0;
  double busy_seconds = 0;  // from the request's arrival to the answer's sending
  std::string error;        // a failed read or a bad request, as the rank said it
  std::vector<float> rows;  // [rows, hidden]
  /// With `distributed.placement: least_loaded`: which experts the rank
  /// has in memory or being read (ascending), of the step's row after the
  /// step and of the next row after its reads ahead, so rank 0 places the
  /// coming steps knowing where every expert is.
  struct Resident {
    int32_t layer = -1;
    std::vector<int32_t> experts;
    bool operator==(const Resident&) const = default;
  };
  std::vector<Resident> resident;
};
/// A rank's expert store counters.
struct Counters {
  int32_t rank = 0, experts_owned = 0;
  uint64_t lookups = 0, pinned_hits = 0, hits = 0, misses = 0, bytes_read = 0;
  double wait_seconds = 0;
  /// What idles a rank's drive: the wall time it had reads in flight, and
  /// its reads ahead (those a step used, and the bytes of those none used).
  double busy_seconds = 0;
  uint64_t reads_ahead = 0, reads_ahead_used = 0, bytes_ahead_wasted = 0;
};
/// The counters of rank `rank`, which owns `experts_owned` routed experts, from its store's stats.
Counters counters_of(const ExpertStoreStats& s, int32_t rank, int32_t experts_owned);

Bytes encode(const Open& m);
Bytes encode(const Hello& m);
Bytes encode(const Assign& m);
Bytes encode(const Ready& m);
/// `hidden` [rows, D] with D = hidden.size() / counts.size(), at `wire`.
Bytes encode_step(uint64_t sequence, int32_t layer, int32_t next_layer, Wire wire,
                  std::span<const int32_t> counts, std::span<const RoutedExpert> choices,
                  std::span<const int32_t> predicted, std::span<const float> hidden);
Bytes encode(const Sums& m, Wire wire);
Bytes encode(const Counters& m);
Bytes encode_op(Op op);
/// A read-ahead request: experts of store row `layer` (no answer).
Bytes encode_prefetch(int32_t layer, std::span<const int32_t> experts);

/// The op a request starts with (the reader is left after it).
Op read_op(ByteReader& in);
Open decode_open(ByteReader& in);
Hello decode_hello(ByteReader& in);
Assign decode_assign(ByteReader& in);
Ready decode_ready(ByteReader& in);
/// Checks the shape: `hidden` columns, ids in 0..experts-1.
Step decode_step(ByteReader& in, int64_t hidden, int32_t experts);
/// Checks the shape: whole rows of `hidden`, resident ids in 0..experts-1.
Sums decode_sums(ByteReader& in, int64_t hidden, int32_t experts);
Counters decode_counters(ByteReader& in);
/// The layer and experts of a read-ahead request, checked against `experts`.
std::pair<int32_t, std::vector<int32_t>> decode_prefetch(ByteReader& in, int32_t experts);

}  // namespace glmrt::cluster
