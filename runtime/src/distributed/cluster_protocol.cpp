#include <glmrt/distributed/cluster_protocol.h>
#include <glmrt/weights/matrix.h>

namespace glmrt::cluster {
namespace {

constexpr uint64_t kMaxElements = uint64_t(1) << 34;  // far above any step's rows

void put_rows(ByteWriter& out, std::span<const float> rows, Wire wire) {
  out.put(wire);
  if (wire == Wire::f32) {
    out.put_span(rows);
    return;
  }
  std::vector<uint16_t> half(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) half[i] = f32_to_bf16(rows[i]);
  out.put_span(std::span<const uint16_t>(half));
}

std::vector<float> get_rows(ByteReader& in, Wire* wire_out = nullptr) {
  const auto wire = in.get<Wire>("wire");
  if (wire_out) *wire_out = wire;
  if (wire == Wire::f32) return in.get_vector<float>("rows", kMaxElements);
  if (wire != Wire::bf16) fail("{}: unknown wire precision {}", in.what(), int(wire));
  const auto half = in.get_vector<uint16_t>("rows", kMaxElements);
  std::vector<float> rows(half.size());
  for (size_t i = 0; i < half.size(); ++i) rows[i] = bf16_to_f32(half[i]);
  return rows;
}

}  // namespace

const char* wire_name(Wire wire) {
  return wire == Wire::f32 ? "f32" : "bf16";
}

Bytes encode_op(Op op) {
  ByteWriter out;
  out.put(op);
  return out.take();
}

Bytes encode_prefetch(int32_t layer, std::span<const int32_t> experts) {
  ByteWriter out;
  out.put(Op::prefetch);
  out.put(layer);
  out.put_span(experts);
  return out.take();
}

std::pair<int32_t, std::vector<int32_t>> decode_prefetch(ByteReader& in, int32_t experts) {
  const auto layer = in.get<int32_t>("layer");
  auto ids = in.get_vector<int32_t>("experts", kMaxElements);
  in.finish();
  for (int32_t id : ids)
    if (id < 0 || id >= experts) fail("{}: expert {} is outside 0..{}", in.what(), id, experts - 1);
  return {layer, std::move(ids)};
}

Bytes encode(const Open& m) {
  ByteWriter out;
  out.put(Op::open);
  out.put_string(m.profile_path);
  out.put_string(m.model_dir);
  out.put<uint8_t>(m.verify ? 1 : 0);
  return out.take();
}

Bytes encode(const Hello& m) {
  ByteWriter out;
  for (const std::string* s : {&m.error, &m.version, &m.host, &m.model_dir, &m.model_id})
    out.put_string(*s);
  out.put<uint64_t>(m.profile_keys.size());
  for (const auto& [key, value] : m.profile_keys) {
    out.put_string(key);
    out.put_string(value);
  }
  out.put<uint64_t>(m.manifest.size());
  for (const ManifestEntry& e : m.manifest) {
    out.put_string(e.file);
    out.put<uint64_t>(e.bytes);
    out.put_string(e.xxh3);
  }
  return out.take();
}

Bytes encode(const Assign& m) {
  ByteWriter out;
  out.put(Op::assign);
  out.put(m.rows);
  out.put(m.experts);
  out.put(m.ranks);
  out.put_span(std::span<const int16_t>(m.owners));
  return out.take();
}

Bytes encode(const Ready& m) {
  ByteWriter out;
  out.put_string(m.error);
  out.put(m.experts_owned);
  out.put(m.fingerprint);
  return out.take();
}

Bytes encode_step(uint64_t sequence, int32_t layer, int32_t next_layer, Wire wire,
                  std::span<const int32_t> counts, std::span<const RoutedExpert> choices,
                  std::span<const int32_t> predicted, std::span<const float> hidden) {
  ByteWriter out;
  out.put(Op::step);
  out.put(sequence);
  out.put(layer);
  out.put(next_layer);
  out.put_span(counts);
  std::vector<int32_t> ids(choices.size());
  std::vector<float> weights(choices.size());
  for (size_t i = 0; i < choices.size(); ++i) {
    ids[i] = choices[i].expert;
    weights[i] = choices[i].weight;
  }
  out.put_span(std::span<const int32_t>(ids));
  out.put_span(std::span<const float>(weights));  // f32 always: a few numbers per row
  out.put_span(predicted);
  put_rows(out, hidden, wire);
  return out.take();
}

Bytes encode(const Sums& m, Wire wire) {
  ByteWriter out;
  out.put(m.sequence);
  out.put(m.busy_seconds);
  out.put_string(m.error);
  out.put<uint32_t>(static_cast<uint32_t>(m.resident.size()));
  for (const Sums::Resident& row : m.resident) {
    out.put(row.layer);
    out.put_span(std::span<const int32_t>(row.experts));
  }
  put_rows(out, m.rows, wire);
  return out.take();
}

Bytes encode(const Counters& m) {
  ByteWriter out;
  out.put(m);
  return out.take();
}

Op read_op(ByteReader& in) {
  const auto op = in.get<Op>("op");
  if (op < Op::open || op > Op::prefetch) fail("{}: unknown request {}", in.what(), uint32_t(op));
  return op;
}

Open decode_open(ByteReader& in) {
  Open m;
  m.profile_path = in.get_string("profile path");
  m.model_dir = in.get_string("model folder");
  m.verify = in.get<uint8_t>("verify") != 0;
  in.finish();
  return m;
}

Hello decode_hello(ByteReader& in) {
  Hello m;
  m.error = in.get_string("error");
  m.version = in.get_string("version");
  m.host = in.get_string("host");
  m.model_dir = in.get_string("model folder");
  m.model_id = in.get_string("model id");
  const auto keys = in.get<uint64_t>("profile keys");
  if (keys > 100000) fail("{}: {} profile keys", in.what(), keys);
  for (uint64_t i = 0; i < keys; ++i) {
    std::string key = in.get_string("profile key");
    std::string value = in.get_string("profile value");
    m.profile_keys.emplace_back(std::move(key), std::move(value));
  }
  const auto files = in.get<uint64_t>("manifest entries");
  if (files > 100000) fail("{}: {} manifest entries", in.what(), files);
  for (uint64_t i = 0; i < files; ++i) {
    ManifestEntry e;
    e.file = in.get_string("manifest file");
    e.bytes = in.get<uint64_t>("manifest bytes");
    e.xxh3 = in.get_string("manifest checksum");
    m.manifest.push_back(std::move(e));
  }
  in.finish();
  return m;
}

Assign decode_assign(ByteReader& in) {
  Assign m;
  m.rows = in.get<int32_t>("rows");
  m.experts = in.get<int32_t>("experts");
  m.ranks = in.get<int32_t>("ranks");
  m.owners = in.get_vector<int16_t>("owners", kMaxElements);
  in.finish();
  return m;
}

Ready decode_ready(ByteReader& in) {
  Ready m;
  m.error = in.get_string("error");
  m.experts_owned = in.get<int32_t>("experts owned");
  m.fingerprint = in.get<uint64_t>("assignment fingerprint");
  in.finish();
  return m;
}

Step decode_step(ByteReader& in, int64_t hidden, int32_t experts) {
  Step m;
  m.sequence = in.get<uint64_t>("sequence");
  m.layer = in.get<int32_t>("layer");
  m.next_layer = in.get<int32_t>("next layer");
  m.counts = in.get_vector<int32_t>("counts", kMaxElements);
  m.ids = in.get_vector<int32_t>("expert ids", kMaxElements);
  m.weights = in.get_vector<float>("weights", kMaxElements);
  m.predicted = in.get_vector<int32_t>("predicted experts", kMaxElements);
  m.rows = get_rows(in, &m.wire);
  in.finish();
  uint64_t choices = 0;
  for (int32_t c : m.counts) {
    if (c < 0 || c > experts) fail("{}: a row with {} chosen experts", in.what(), c);
    choices += static_cast<uint64_t>(c);
  }
  if (choices != m.ids.size() || m.weights.size() != m.ids.size())
    fail("{}: {} choices counted, {} ids and {} weights sent", in.what(), choices, m.ids.size(),
         m.weights.size());
  for (const auto* list : {&m.ids, &m.predicted})
    for (int32_t id : *list)
      if (id < 0 || id >= experts)
        fail("{}: expert {} is outside 0..{}", in.what(), id, experts - 1);
  if (m.rows.size() != m.counts.size() * static_cast<uint64_t>(hidden))
    fail("{}: {} values for {} rows of {}", in.what(), m.rows.size(), m.counts.size(), hidden);
  return m;
}

Sums decode_sums(ByteReader& in, int64_t hidden, int32_t experts) {
  Sums m;
  m.sequence = in.get<uint64_t>("sequence");
  m.busy_seconds = in.get<double>("busy seconds");
  m.error = in.get_string("error");
  const auto rows = in.get<uint32_t>("resident rows");
  if (rows > 2) fail("{}: {} rows of resident experts, at most 2 are sent", in.what(), rows);
  m.resident.resize(rows);
  for (Sums::Resident& row : m.resident) {
    row.layer = in.get<int32_t>("resident layer");
    row.experts = in.get_vector<int32_t>("resident experts", kMaxElements);
  }
  m.rows = get_rows(in);
  in.finish();
  if (hidden > 0 && m.rows.size() % static_cast<uint64_t>(hidden) != 0)
    fail("{}: {} values are not whole rows of {}", in.what(), m.rows.size(), hidden);
  for (const Sums::Resident& row : m.resident)
    for (int32_t id : row.experts)
      if (id < 0 || id >= experts)
        fail("{}: resident expert {} is outside 0..{}", in.what(), id, experts - 1);
  return m;
}

Counters decode_counters(ByteReader& in) {
  const auto m = in.get<Counters>("counters");
  in.finish();
  return m;
}

Counters counters_of(const ExpertStoreStats& s, int32_t rank, int32_t experts_owned) {
  Counters c;
  c.rank = rank;
  c.experts_owned = experts_owned;
  c.pinned_hits = s.pinned_hits;
  c.hits = s.hits;
  c.misses = s.misses;
  c.lookups = s.pinned_hits + s.hits + s.misses;
  c.bytes_read = s.bytes_read;
  c.wait_seconds = s.wait_seconds;
  c.busy_seconds = s.busy_seconds;
  c.reads_ahead = s.prefetch_reads;
  c.reads_ahead_used = s.prefetch_reads_used;
  c.bytes_ahead_wasted = s.prefetch_bytes_wasted;
  return c;
}

}  // namespace glmrt::cluster
