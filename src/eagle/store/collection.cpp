#include "eagle/store/collection.h"
#include "eagle/store/record_codec.h"
#include "eagle/core/base64.h"
#include "eagle/store/checked_file.h"

#include <fcntl.h>
#include <cerrno>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <functional>
#include <cmath>
#include <fstream>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <bit>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "eagle/core/binary_io.h"
#include "eagle/core/error.h"
#include "eagle/core/read_ahead.h"
#include "eagle/core/file_map.h"
#include "eagle/core/utf8.h"
#include "eagle/filter/compile.h"
#include "eagle/filter/evaluate.h"
#include "eagle/filter/parser.h"
#include "eagle/filter/scalar_index.h"
#include "eagle/index/vector/vector_index.h"

namespace eagle::store {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Segment files, after [magic][u64 lsn][u64 rows], then the BM25 index and the vector
// index, then the checked file's footer (checked_file.h).
// Layout 1 (read only): per row [id][text][u8 flag][values as a JSON array].
// Layout 2 (read only): per row [id][u32 CRC-32 of the text][text][u8 flag][values,
//   record_codec's binary form]: an open references each text by offset, length and
//   CRC without reading it, and decodes values without a JSON parser.
// Layout 3 (written): the rows without their texts, per row [u32 id length][id]
//   [u32 values length][values][u32 text CRC][u32 text length][u8 flag] (the first
//   four parts are RowTable's form: an open points at them in the mapped file instead
//   of copying them); then every text back to back; then the two indexes; and last a
//   section table [u64 texts][u64 BM25][u64 vectors][magic] giving where each part
//   starts. An open scans the compact rows without touching a text's page, and reads
//   the indexes on another core at the same time.
constexpr char kSegMagic[8] = {'E', 'G', 'L', 'S', 'E', 'G', '1', '\0'};
constexpr char kSegMagic2[8] = {'E', 'G', 'L', 'S', 'E', 'G', '2', '\0'};
constexpr char kSegMagic3[8] = {'E', 'G', 'L', 'S', 'E', 'G', '3', '\0'};
constexpr char kSectionsMagic[8] = {'E', 'G', 'L', 'S', 'E', 'C', 'T', '1'};
constexpr uint64_t kSectionTableBytes = 3 * sizeof(uint64_t) + sizeof(kSectionsMagic);
constexpr uint64_t kSegHeaderBytes = sizeof(kSegMagic) + 2 * sizeof(uint64_t);

// A segment file just written, mapped for its rows (nullptr when it cannot be: the
// rows then stay where they are).
std::shared_ptr<const FileMap> map_rows_of(const fs::path& file) {
  try {
    return FileMap::open(file);
  } catch (const Error& e) {
    spdlog::warn("{}: its rows stay where they were: {}", file.string(), e.what());
    return nullptr;
  }
}
std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot read " + file.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// "wal-00000000000000000042.log" -> 42
std::optional<uint64_t> numbered(const fs::path& p, std::string_view prefix, std::string_view ext) {
  auto name = p.filename().string();
  if (name.size() <= prefix.size() + ext.size() || name.rfind(prefix, 0) != 0 ||
      name.substr(name.size() - ext.size()) != ext)
    return std::nullopt;
  auto digits = name.substr(prefix.size(), name.size() - prefix.size() - ext.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(digits);
}

// A segment or deletion-bitmap file (seg-<n>.eagle, deleted-<n>.eagle) that `named`
// (what MANIFEST lists) does not hold: garbage, an older generation or the output of a
// checkpoint or merge a crash interrupted.
bool unnamed_store_file(const fs::path& p, const std::set<std::string>& named) {
  return (numbered(p, "seg-", ".eagle") || numbered(p, "deleted-", ".eagle")) && !named.count(p.filename().string());
}

std::string numbered_name(std::string_view prefix, uint64_t n, std::string_view ext) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%020llu", static_cast<unsigned long long>(n));
  return std::string(prefix) + buf + std::string(ext);
}

// Adapts a stored row to the filter evaluator's row interface. A field is decoded
// when the filter first reads it: the row-by-row fallback of a filter over a
// non-indexed field decodes that field of each row, not every field.
class RowAdapter : public filter::RowView {
 public:
  RowAdapter(const RowTable& rows, const CollectionSchema& schema)
      : rows_(rows), schema_(schema), fields_(schema.fields.size()), decoded_(schema.fields.size()) {}
  void bind(uint32_t row) {
    row_ = row;
    id_ = rows_.id(row);
    std::fill(decoded_.begin(), decoded_.end(), false);
  }
  const Value& field(size_t i) const override {
    if (i >= fields_.size()) return kNull;
    if (!decoded_[i]) {
      fields_[i] = rows_.value(row_, i, schema_);
      decoded_[i] = true;
    }
    return fields_[i];
  }
  const std::string& id() const override { return id_; }

 private:
  static inline const Value kNull{};
  const RowTable& rows_;
  const CollectionSchema& schema_;
  uint32_t row_ = 0;
  std::string id_;
  mutable std::vector<Value> fields_;
  mutable std::vector<bool> decoded_;
};

// A transaction id as the log writes it: 16 lowercase hex digits.
std::string txn_hex(TxnId txn) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(txn));
  return std::string(buf, 16);
}

std::optional<TxnId> parse_txn_hex(std::string_view s) {
  if (s.size() < 16) return std::nullopt;
  TxnId t = 0;
  for (size_t i = 0; i < 16; ++i) {
    const char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    t = (t << 4) | static_cast<TxnId>(d);
  }
  if (t == 0) return std::nullopt;
  return t;
}

// The transaction a txn_part record belongs to, in either payload form.
std::optional<TxnId> part_txn(std::string_view payload) {
  if (is_binary_write(payload)) {
    auto t = binary_write_txn(payload);
    return t && *t ? t : std::nullopt;
  }
  return parse_txn_hex(payload);
}

}  // namespace

TxnId new_txn_id() {
  static std::mutex mu;
  static std::mt19937_64 gen{[] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }()};
  std::lock_guard lock(mu);
  TxnId t = 0;
  while (t == 0) t = gen();
  return t;
}

Record record_from_json(const json& j, const CollectionSchema& schema) {
  if (!j.is_object()) fail(ErrorCode::invalid_argument, "a record must be a JSON object");
  Record r;
  r.values.assign(schema.fields.size(), std::monostate{});
  bool has_vector = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& key = it.key();
    const auto& v = it.value();
    if (key == "id") {
      if (v.is_string()) r.id = v.get<std::string>();
      else if (v.is_number_integer()) r.id = std::to_string(v.get<int64_t>());
      else fail(ErrorCode::invalid_argument, "field 'id' must be a string");
    } else if (key == schema.text_field) {
      if (!v.is_string() && !v.is_null())
        fail(ErrorCode::invalid_argument, "field '" + key + "' must be a string");
      if (v.is_string()) r.text = v.get<std::string>();
    } else if (key == schema.vector.name) {
      if (!v.is_array()) fail(ErrorCode::invalid_argument, "field '" + key + "' must be an array of numbers");
      if (v.size() != schema.vector.dim)
        fail(ErrorCode::invalid_argument, "field '" + key + "' has dimension " + std::to_string(v.size()) +
                                              ", the collection expects " + std::to_string(schema.vector.dim));
      r.vector.reserve(v.size());
      for (const auto& x : v) {
        if (!x.is_number()) fail(ErrorCode::invalid_argument, "field '" + key + "' must hold numbers only");
        float f = x.get<float>();
        if (!std::isfinite(f)) fail(ErrorCode::invalid_argument, "field '" + key + "' holds a non-finite number");
        r.vector.push_back(f);
      }
      has_vector = true;
    } else if (auto idx = schema.field_index(key)) {
      r.values[*idx] = value_from_json(v, schema.fields[*idx].type, key);
    } else {
      fail(ErrorCode::invalid_argument, "unknown field '" + key + "' for collection '" + schema.name + "'");
    }
  }
  if (r.id.empty()) fail(ErrorCode::invalid_argument, "record has no 'id'");
  if (r.id.size() > 4096) fail(ErrorCode::invalid_argument, "record id longer than 4096 bytes");
  if (!has_vector) fail(ErrorCode::invalid_argument, "record '" + r.id + "' has no '" + schema.vector.name + "'");
  return r;
}

json record_to_json(const Record& r, const CollectionSchema& schema, bool with_vector) {
  json j = {{"id", r.id}, {schema.text_field, r.text}};
  if (with_vector) j[schema.vector.name] = r.vector;
  for (size_t i = 0; i < schema.fields.size(); ++i)
    if (!is_null(r.values[i])) j[schema.fields[i].name] = value_to_json(r.values[i]);
  return j;
}

Collection::Collection(CollectionSchema schema, CollectionOptions opts, fs::path dir)
    : schema_(std::move(schema)),
      opts_(opts),
      dir_(std::move(dir)),
      // A reader leaves the store's folder alone: its spill (replayed log records) goes
      // to the temporary folder.
      texts_(std::make_unique<RowTexts>(opts_.read_only ? fs::path{} : dir_)) {
  schema_.validate();
  // A collection's own length normalisation (the visual collection's tiles) wins.
  if (schema_.text_length_norm) opts_.bm25.b = *schema_.text_length_norm;
  // Persistent collections only: their writes end in a checkpoint, which links every
  // row, so results once a write is done never depend on the builder's progress. An
  // in-memory collection (tests, an evaluation's corpus) has no checkpoint to wait for.
  defer_linking_ = opts_.background_linking && !dir_.empty();
  reset_indexes();
  // Started here, by the thread that opens the collection (usually the process's main
  // thread), so the builder does not inherit a low-priority writer's niceness.
  if (defer_linking_)
    for (uint32_t i = 0; i < std::max<uint32_t>(1, opts_.builder_threads); ++i)
      linkers_.emplace_back([this] { linker_loop(); });
}

Collection::~Collection() {
  stop_linker();
  {
    std::lock_guard g(merge_mu_);
    merge_stop_ = true;  // a running merge stops at its next batch
  }
  merge_cv_.notify_all();
  if (merger_.joinable()) merger_.join();
}

void Collection::reset_indexes() {
  rows_.clear();
  texts_->clear();
  deleted_ = Bitset();
  live_.clear();
  segments_.clear();
  segments_.push_back(new_segment(0));
  scalar_.clear();
  for (const auto& f : schema_.fields)
    scalar_.push_back(f.indexed ? std::make_unique<filter::ScalarIndex>(f.type) : nullptr);
}

Collection::Segment Collection::new_segment(uint32_t base) const {
  Segment s;
  s.base = base;
  s.lexical = index::Bm25Index(opts_.bm25, opts_.analyzer);
  s.vectors = index::make_vector_index(schema_.vector);
  return s;
}

Collection::Segment& Collection::segment_of(uint32_t row) {
  return const_cast<Segment&>(std::as_const(*this).segment_of(row));
}

const Collection::Segment& Collection::segment_of(uint32_t row) const {
  // The last segment whose base is at or below the row (an empty active segment's
  // base is the row count, past every row).
  auto it = std::upper_bound(segments_.begin(), segments_.end(), row,
                             [](uint32_t r, const Segment& s) { return r < s.base; });
  return *std::prev(it);
}

std::string Collection::next_file_name(const char* prefix) { return numbered_name(prefix, next_file_++, ".eagle"); }

size_t Collection::segment_count() const {
  std::shared_lock lock(mutex_);
  size_t n = 0;
  for (const auto& seg : segments_) n += seg.rows() > 0;
  return n;
}

std::unique_ptr<Collection> Collection::in_memory(CollectionSchema schema, CollectionOptions opts) {
  return std::unique_ptr<Collection>(new Collection(std::move(schema), opts, {}));
}

std::unique_ptr<Collection> Collection::create(const fs::path& dir, CollectionSchema schema,
                                               CollectionOptions opts) {
  schema.validate();
  if (fs::exists(dir / "schema.json"))
    fail(ErrorCode::conflict, "a collection already exists at " + dir.string());
  auto& fsys = io::or_posix(opts.file_system);
  io::create_directories_durably(fsys, dir);
  io::write_file_atomic(fsys, dir / "schema.json",
                        [&](std::ostream& out) { out << with_checksum(schema.to_json()).dump(2); });
  return open(dir, opts);
}

namespace {
std::string manifest_text(const fs::path& dir) {
  std::ifstream in(dir / "MANIFEST", std::ios::binary);
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

std::unique_ptr<Collection> Collection::open(const fs::path& dir, CollectionOptions opts) {
  if (!fs::exists(dir / "schema.json"))
    fail(ErrorCode::not_found, "no collection at " + dir.string() + " (schema.json missing)");
  auto parse_schema = [&](const std::string& text) {
    json sj;
    try {
      sj = json::parse(text);
    } catch (const json::exception& e) {
      fail(ErrorCode::data_loss, (dir / "schema.json").string() + ": not valid JSON (" + e.what() + ")");
    }
    verify_json_checksum(sj, dir / "schema.json");
    sj.erase("checksum");
    return CollectionSchema::from_json(sj);
  };
  // A reader races the writer: a checkpoint may replace the segment (and logs) the
  // manifest it read names, and a rebuild (eagle reembed) swaps the whole folder for
  // one with another schema. The writer publishes before it deletes, so a reader that
  // finds schema.json and MANIFEST unchanged after loading has a consistent view
  // (a rebuilt collection always has another schema: other vectors); otherwise it
  // starts again.
  for (int attempt = 0;; ++attempt) {
    const bool may_retry = opts.read_only && attempt < 20;
    std::string schema_before, manifest_before;
    std::unique_ptr<Collection> c;
    try {
      schema_before = read_file(dir / "schema.json");
      manifest_before = manifest_text(dir);
      c.reset(new Collection(parse_schema(schema_before), opts, dir));
      c->load_from_disk(manifest_before);
    } catch (const Error&) {
      if (!may_retry || (manifest_text(dir) == manifest_before && fs::exists(dir / "schema.json") &&
                         read_file(dir / "schema.json") == schema_before))
        throw;
      continue;  // files replaced under us
    } catch (const fs::filesystem_error&) {
      if (!may_retry) throw;
      continue;  // the folder renamed under us
    }
    if (may_retry) {
      std::error_code ec;
      if (!fs::exists(dir / "schema.json", ec) || manifest_text(dir) != manifest_before ||
          read_file(dir / "schema.json") != schema_before)
        continue;
    }
    // Rows the log replayed are stored, not linked: the builder links them while the
    // collection serves (searches scan them exactly meanwhile).
    if (c->unlinked_rows_.load() > 0) c->wake_linker();
    // Segments left for merging (a bulk ingest seals one every checkpoint_wal_bytes and
    // its process exits before the merges it asked for) are merged by the next writer
    // that opens them, not only after its first checkpoint: a server that only searches
    // would otherwise search ten segments for ever.
    c->request_merges_if_due();
    return c;
  }
}

void Collection::load_from_disk(const std::string& manifest) {
  std::unique_lock lock(mutex_);
  const fs::path& dir = dir_;
  const bool ro = opts_.read_only;
  // 1. The segments named by the manifest, if any, and the deletions over their rows.
  std::set<std::string> named;
  if (!manifest.empty()) {
    try {
      auto m = json::parse(manifest);
      verify_json_checksum(m, dir / "MANIFEST");
      const int format = m.value("format", 1);
      segments_.clear();
      if (format >= 3) {
        for (const auto& entry : m.at("segments")) {
          const auto file = entry.at("file").get<std::string>();
          segments_.push_back(load_segment(dir / file, /*checked=*/true, /*flags_are_deletions=*/false));
          if (segments_.back().rows() != entry.at("rows").get<uint64_t>())
            fail(ErrorCode::data_loss, (dir / file).string() + ": holds " + std::to_string(segments_.back().rows()) +
                                           " rows, MANIFEST says " + entry.at("rows").dump());
          named.insert(file);
        }
        deletions_file_ = m.at("deleted").get<std::string>();
        load_deletions(dir / deletions_file_);
        named.insert(deletions_file_);
        next_file_ = m.at("next_file").get<uint64_t>();
      } else {
        // Format 1 and 2: one segment of every row, its row flags the deletions.
        const auto file = m.at("segment").get<std::string>();
        // Format 2 segments carry block checksums, verified before a byte is used.
        segments_.push_back(load_segment(dir / file, format >= 2, /*flags_are_deletions=*/true));
        named.insert(file);
        next_file_ = numbered(dir / file, "seg-", ".eagle").value_or(0) + 1;
      }
      last_lsn_ = m.at("last_lsn").get<uint64_t>();
      covered_lsn_ = last_lsn_;
      manifest_txns_ = m.value("transactions", json::array());
    } catch (const json::exception& e) {
      fail(ErrorCode::data_loss, (dir / "MANIFEST").string() + ": " + e.what());
    }
    for (auto& seg : segments_) count_hidden(seg);
    live_.reserve(rows_.size() - deleted_.count());
    for (uint32_t r = 0; r < rows_.size(); ++r)
      if (!deleted_.test(r)) live_.put(r);
    segments_.push_back(new_segment(static_cast<uint32_t>(rows_.size())));
  }
  // 2. A writer removes leftovers of an interrupted checkpoint: temporary files,
  //    segment and deletion files the manifest does not name. A reader leaves every
  //    file alone.
  std::vector<std::pair<uint64_t, fs::path>> wals;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") {
      if (!ro) fsys().remove(e.path());
    } else if (unnamed_store_file(e.path(), named)) {
      if (!ro) fsys().remove(e.path());
    } else if (auto n = numbered(e.path(), "wal-", ".log")) {
      wals.emplace_back(*n, e.path());
    }
  }
  std::sort(wals.begin(), wals.end());
  // 3. Replay every log record after the segment. A writer cuts a torn tail (a write
  //    never acknowledged); a reader stops before it, since the frame may be one the
  //    writer is appending right now. A first pass finds the committed transactions:
  //    the parts of any other one are skipped (a write never acknowledged).
  const uint64_t segment_lsn = last_lsn_;
  std::unordered_set<TxnId> committed;
  for (const auto& wal : wals)
    replay_wal(
        wal.second,
        [&](uint64_t lsn, WalOp op, const std::string& payload) {
          if (lsn > segment_lsn && op == WalOp::txn_commit)
            if (auto t = parse_txn_hex(payload)) committed.insert(*t);
        },
        /*truncate_torn_tail=*/false);
  auto is_committed = [&](TxnId t) {
    return committed.count(t) || (opts_.committed_elsewhere && opts_.committed_elsewhere(t));
  };
  try {
    restore_txns(manifest_txns_, is_committed);
  } catch (const json::exception& e) {
    fail(ErrorCode::data_loss, (dir / "MANIFEST").string() + ": " + e.what());
  }
  replay_logs(wals, segment_lsn, is_committed);
  // What is still staged was committed by the catalog (a transaction over several
  // collections) but a crash came before this collection logged its commit record.
  std::vector<TxnId> committed_elsewhere;
  for (const auto& [t, staged] : txns_) committed_elsewhere.push_back(t);
  if (!ro) {
    // 4. Append to the newest log (or a new one).
    fs::path wal_file = wals.empty() ? dir / numbered_name("wal-", last_lsn_ + 1, ".log") : wals.back().second;
    wal_ = std::make_unique<WalWriter>(wal_file, opts_.sync, fsys());
    wal_bytes_ = fs::exists(wal_file) ? fs::file_size(wal_file) : 0;
    fsys().sync_path(dir, true);
  }
  for (TxnId t : committed_elsewhere) {
    if (txn_state(t).failed) {
      spdlog::error("{}: transaction {} was committed but a part could not be applied; none of it is applied",
                    dir.string(), txn_hex(t));
      txns_.erase(t);
      continue;
    }
    if (!ro) log(WalOp::txn_commit, txn_hex(t));
    apply_commit(t);
  }
}

void Collection::require_writable() const {
  if (opts_.read_only)
    fail(ErrorCode::conflict, "collection '" + schema_.name +
                                  "' is open read-only (another process owns the store for writing)");
}

void Collection::validate_batch(const std::vector<Record>& records, bool allow_existing) const {
  if (records.size() > kMaxBatch)
    fail(ErrorCode::invalid_argument, "a write may carry at most " + std::to_string(kMaxBatch) + " records");
  std::unordered_set<std::string_view> ids;
  // Everything a record carries must survive the log's JSON round trip unchanged:
  // NaN and infinities would be logged as null, invalid UTF-8 cannot be logged at
  // all. Checked here, before the log, so a refused write never reaches it.
  auto text_ok = [&](const Record& r, const std::string& what, const std::string& v) {
    if (auto bad = first_invalid_utf8(v))
      fail(ErrorCode::invalid_argument, "record '" + repair_utf8(r.id) + "': " + what + " is not valid UTF-8 (byte " +
                                            std::to_string(*bad) + ")");
  };
  for (const auto& r : records) {
    if (r.id.empty()) fail(ErrorCode::invalid_argument, "record has no id");
    text_ok(r, "the id", r.id);
    text_ok(r, "the text", r.text);
    for (size_t d = 0; d < r.vector.size(); ++d)
      if (!std::isfinite(r.vector[d]))
        fail(ErrorCode::invalid_argument, "record '" + r.id + "': vector component " + std::to_string(d) +
                                              " is not a finite number");
    if (r.vector.size() != schema_.vector.dim)
      fail(ErrorCode::invalid_argument, "record '" + r.id + "' has a vector of dimension " +
                                            std::to_string(r.vector.size()) + ", expected " +
                                            std::to_string(schema_.vector.dim));
    if (r.values.size() != schema_.fields.size())
      fail(ErrorCode::invalid_argument, "record '" + r.id + "' does not match the schema");
    for (size_t i = 0; i < r.values.size(); ++i) {
      if (is_null(r.values[i])) continue;
      bool ok = false;
      switch (schema_.fields[i].type) {
        case FieldType::string: ok = std::holds_alternative<std::string>(r.values[i]); break;
        case FieldType::int64: ok = std::holds_alternative<int64_t>(r.values[i]); break;
        case FieldType::float64: ok = std::holds_alternative<double>(r.values[i]); break;
        case FieldType::boolean: ok = std::holds_alternative<bool>(r.values[i]); break;
        case FieldType::string_list: ok = std::holds_alternative<StringList>(r.values[i]); break;
        case FieldType::json: ok = std::holds_alternative<json>(r.values[i]); break;
      }
      if (!ok)
        fail(ErrorCode::invalid_argument, "record '" + r.id + "': field '" + schema_.fields[i].name +
                                              "' is not a " + std::string(field_type_name(schema_.fields[i].type)));
      const std::string field = "field '" + schema_.fields[i].name + "'";
      if (const auto* d = std::get_if<double>(&r.values[i]); d && !std::isfinite(*d))
        fail(ErrorCode::invalid_argument, "record '" + r.id + "': " + field + " is not a finite number");
      if (const auto* str = std::get_if<std::string>(&r.values[i])) text_ok(r, field, *str);
      if (const auto* list = std::get_if<StringList>(&r.values[i]))
        for (const auto& item : *list) text_ok(r, field, item);
      if (const auto* j = std::get_if<json>(&r.values[i])) {
        try {
          (void)j->dump();  // throws on invalid UTF-8 inside
        } catch (const json::exception&) {
          fail(ErrorCode::invalid_argument, "record '" + r.id + "': " + field + " holds text that is not valid UTF-8");
        }
      }
    }
    if (!ids.insert(r.id).second)
      fail(ErrorCode::invalid_argument, "id '" + r.id + "' appears twice in one write");
    if (!allow_existing && live_.contains(r.id)) fail(ErrorCode::conflict, "id '" + r.id + "' already exists");
  }
}

void Collection::log(WalOp op, const std::string& payload) {
  // The LSN advances only once the record is durable: a failed append leaves no gap
  // and no half-applied write.
  if (wal_) {
    wal_->append(last_lsn_ + 1, op, payload);
    wal_bytes_ += payload.size() + 17;
  }
  ++last_lsn_;
}

namespace {
// A write as its log record holds it (record_codec.h: binary, vectors as stored).
std::string write_payload(const std::vector<std::string>& deletes, const std::vector<Record>& records,
                          const CollectionSchema& schema) {
  std::string out;
  encode_write(0, deletes, records, schema, out);
  return out;
}
}  // namespace

// The write path (insert, upsert, replace, remove, stage, commit). Writers are ordered
// by write_mu_, and every change to the rows and indexes happens under it, so a writer
// reads the state without mutex_. A search never waits for the disk: the log append
// and its fsync run before mutex_ is taken; each new row is then indexed hidden under
// its own brief exclusive hold (append_hidden), so a search waits for one row's
// indexing at most; and the write becomes visible at once in one exclusive hold that
// only flips bits and ids (publish).

void Collection::insert(std::vector<Record> records) { write_records(records, WalOp::insert, false); }

void Collection::upsert(std::vector<Record> records) { write_records(records, WalOp::upsert, true); }

void Collection::write_records(std::vector<Record>& records, WalOp op, bool allow_existing) {
  require_writable();
  std::lock_guard w(write_mu_);
  publish_pending_locked();
  validate_batch(records, allow_existing);
  if (records.empty()) return;
  log(op, wal_ ? write_payload({}, records, schema_) : std::string());
  const uint32_t first = append_hidden(records);
  publish({}, first);
  maybe_checkpoint();
}

std::vector<std::string> Collection::live_ids(const std::vector<std::string>& ids) const {
  std::vector<std::string> present;
  for (const auto& id : ids)
    if (live_.contains(id)) present.push_back(id);
  return present;
}

size_t Collection::replace(const std::vector<std::string>& delete_ids, std::vector<Record> records,
                           bool auto_checkpoint) {
  require_writable();
  if (delete_ids.size() > kMaxBatch)
    fail(ErrorCode::invalid_argument, "a delete may name at most " + std::to_string(kMaxBatch) + " ids");
  std::lock_guard w(write_mu_);
  publish_pending_locked();
  validate_batch(records, true);
  const auto present = live_ids(delete_ids);
  if (present.empty() && records.empty()) return 0;
  log(WalOp::replace, wal_ ? write_payload(present, records, schema_) : std::string());
  const uint32_t first = append_hidden(records);
  const size_t n = publish(present, first);
  if (auto_checkpoint) maybe_checkpoint();
  return n;
}

size_t Collection::remove(const std::vector<std::string>& ids, bool auto_checkpoint) {
  require_writable();
  if (ids.size() > kMaxBatch)
    fail(ErrorCode::invalid_argument, "a delete may name at most " + std::to_string(kMaxBatch) + " ids");
  std::lock_guard w(write_mu_);
  publish_pending_locked();
  const auto present = live_ids(ids);
  if (present.empty()) return 0;
  log(WalOp::delete_ids, wal_ ? write_payload(present, {}, schema_) : std::string());
  const size_t n = publish(present, static_cast<uint32_t>(rows_.size()));
  if (auto_checkpoint) maybe_checkpoint();
  return n;
}

size_t Collection::remove_where(std::string_view expr, const TemplateParams& params) {
  require_writable();
  std::lock_guard w(write_mu_);
  publish_pending_locked();
  // The filter is resolved to ids now, so replaying the log deletes exactly these
  // rows even if later writes would match the same expression.
  std::vector<std::string> ids;
  filter_locked(expr, params).for_each([&](size_t r) { ids.emplace_back(rows_.id(static_cast<uint32_t>(r))); });
  if (ids.empty()) return 0;
  log(WalOp::delete_ids, wal_ ? write_payload(ids, {}, schema_) : std::string());
  const size_t n = publish(ids, static_cast<uint32_t>(rows_.size()));
  maybe_checkpoint();
  return n;
}

uint32_t Collection::append_hidden(std::vector<Record>& records, const std::function<void(uint32_t)>& on_row) {
  const auto first = static_cast<uint32_t>(rows_.size());
  // kAppendRows rows per exclusive hold: each hold waits for the builder's current
  // link (~0.2 ms at a million rows), so a hold a row left the writer waiting most of
  // the time; a hold of 64 rows' index updates is about as long as one link.
  constexpr size_t kAppendRows = 64;
  std::vector<index::AnalyzedDoc> analyzed;
  for (size_t from = 0; from < records.size(); from += kAppendRows) {
    const size_t to = std::min(records.size(), from + kAppendRows);
    // Analysed before the lock: only the indexes' own updates are exclusive.
    analyzed.clear();
    for (size_t i = from; i < to; ++i) analyzed.push_back(segments_.back().lexical.analyze(records[i].text));
    {
      // Announced, so the builder lets this hold in between its links (linker_loop).
      writer_waiting_.fetch_add(1, std::memory_order_relaxed);
      std::unique_lock lock(mutex_);
      writer_waiting_.fetch_sub(1, std::memory_order_relaxed);
      for (size_t i = from; i < to; ++i) {
        const uint32_t row = append_row(records[i], analyzed[i - from]);
        hide(row);
        if (on_row) on_row(row);
      }
    }
    if (texts_->flush_due()) {
      // The spill's disk write with no lock; reads switch to the file after it.
      if (const size_t n = texts_->write_buffered()) {
        std::unique_lock lock(mutex_);
        texts_->drop_written(n);
      }
    }
    if (unlinked_rows_.load(std::memory_order_relaxed) > 0) {
      wake_linker();
      if (unlinked_rows_.load(std::memory_order_relaxed) > opts_.max_unlinked_rows) wait_for_linker();
    }
  }
  return first;
}

size_t Collection::publish(const std::vector<std::string>& deletes, uint32_t first) {
  std::unique_lock lock(mutex_);
  const size_t n = apply_remove(deletes);
  for (auto row = first; row < rows_.size(); ++row) {
    if (auto old = live_.put(row)) hide(*old);  // upsert: the old row becomes a tombstone
    unhide(row);
  }
  return n;
}

uint32_t Collection::append_row(Record& r, const index::AnalyzedDoc& text) {
  const uint32_t row = static_cast<uint32_t>(rows_.size());
  // The lexical index sees the text; the vector index the vector; the scalar
  // indexes their field. Row ids are dense and shared by all three.
  auto& seg = segments_.back();
  seg.lexical.add(text);
  if (defer_linking_) {
    // Stored now, linked into the graph by the builder (background_linking).
    seg.vectors->add_unlinked(row - seg.base, r.vector.data());
    unlinked_rows_.store(seg.vectors->pending(), std::memory_order_relaxed);
  } else {
    seg.vectors->add(row - seg.base, r.vector.data());
  }
  for (size_t i = 0; i < scalar_.size(); ++i)
    if (scalar_[i]) scalar_[i]->add(row, r.values[i]);
  rows_.append(r.id, texts_->spill(r.text), r.values, schema_);
  deleted_.resize(rows_.size());
  return row;
}

void Collection::hide(uint32_t row) {
  if (deleted_.test(row)) return;
  deleted_.set(row);
  auto& seg = segment_of(row);
  ++seg.hidden_docs;
  seg.hidden_len += seg.lexical.doc_len(row - seg.base);
}

void Collection::unhide(uint32_t row) {
  if (!deleted_.test(row)) return;
  deleted_.reset(row);
  auto& seg = segment_of(row);
  --seg.hidden_docs;
  seg.hidden_len -= seg.lexical.doc_len(row - seg.base);
}

void Collection::apply_insert(std::vector<Record>& records, const std::vector<index::AnalyzedDoc>* analyzed) {
  for (size_t i = 0; i < records.size(); ++i) {
    auto& r = records[i];
    const uint32_t row = append_row(r, analyzed ? (*analyzed)[i] : segments_.back().lexical.analyze(r.text));
    if (auto old = live_.put(row)) hide(*old);  // upsert: the old row becomes a tombstone
    if (texts_->flush_due()) texts_->flush();
  }
}

void Collection::apply_staged(TxnId txn, std::vector<std::string> deletes, std::vector<Record>& records,
                              const std::vector<index::AnalyzedDoc>* analyzed) {
  auto& t = txn_state(txn);
  t.deletes.insert(t.deletes.end(), std::make_move_iterator(deletes.begin()), std::make_move_iterator(deletes.end()));
  for (size_t i = 0; i < records.size(); ++i) {
    auto& r = records[i];
    const uint32_t row = append_row(r, analyzed ? (*analyzed)[i] : segments_.back().lexical.analyze(r.text));
    if (texts_->flush_due()) texts_->flush();
    hide(row);  // hidden until the commit
    // A row staged again in the same transaction replaces the earlier one, which
    // stays hidden for good.
    t.rows.put(row);
  }
}

size_t Collection::apply_commit(TxnId txn) {
  auto it = txns_.find(txn);
  if (it == txns_.end()) return 0;
  // Deletes first, then the staged rows (a staged row may carry a deleted id).
  const size_t n = apply_remove(it->second.deletes);
  // Drained, not copied: each staged row leaves the transaction's set as it enters
  // live_, so the two sets never both hold every row (40 bytes a row at the peak).
  it->second.rows.drain([&](uint32_t row) {
    if (auto old = live_.put(row)) hide(*old);
    unhide(row);
  });
  txns_.erase(it);
  return n;
}

std::vector<std::string> Collection::part_payloads(TxnId txn, const std::vector<std::string>& deletes,
                                                   const std::vector<Record>& records) const {
  // Each part: the binary write (record_codec.h) with the transaction's id, at most
  // kTxnPartBytes of deletes and records (a single larger record goes alone; the log
  // refuses it past its limit).
  std::vector<std::string> parts;
  std::vector<std::string> dels;
  std::vector<Record> ups;  // copies of one part's records at a time
  size_t bytes = 0;
  auto flush = [&] {
    std::string part;
    encode_write(txn, dels, ups, schema_, part);
    parts.push_back(std::move(part));
    dels.clear();
    ups.clear();
    bytes = 0;
  };
  auto room = [&](size_t more) {
    if (!(dels.empty() && ups.empty()) && bytes + more > kTxnPartBytes) flush();
    bytes += more;
  };
  for (const auto& id : deletes) {
    room(encoded_id_bytes(id));
    dels.push_back(id);
  }
  for (const auto& r : records) {
    room(encoded_record_bytes(r, schema_));
    ups.push_back(r);
  }
  if (!dels.empty() || !ups.empty() || parts.empty()) flush();
  return parts;
}

void Collection::stage(TxnId txn, const std::vector<std::string>& delete_ids, std::vector<Record> records) {
  require_writable();
  if (txn == 0) fail(ErrorCode::invalid_argument, "transaction id 0 is not a transaction");
  if (delete_ids.size() > kMaxBatch)
    fail(ErrorCode::invalid_argument, "a delete may name at most " + std::to_string(kMaxBatch) + " ids");
  std::lock_guard w(write_mu_);
  publish_pending_locked();
  if (auto it = txns_.find(txn); it != txns_.end() && it->second.failed)
    fail(ErrorCode::conflict, "transaction " + txn_hex(txn) + " failed earlier; abort it");
  validate_batch(records, true);
  if (wal_) {
    const auto parts = part_payloads(txn, delete_ids, records);
    for (size_t i = 0; i < parts.size(); ++i) {
      try {
        log(WalOp::txn_part, parts[i]);
      } catch (...) {
        // Some parts may be in the log: the transaction can no longer commit whole.
        if (i > 0) {
          std::unique_lock lock(mutex_);
          txn_state(txn).failed = true;
        }
        throw;
      }
    }
  } else {
    log(WalOp::txn_part, std::string());
  }
  StagedTxn* t = nullptr;
  {
    std::unique_lock lock(mutex_);
    t = &txn_state(txn);
    t->deletes.insert(t->deletes.end(), delete_ids.begin(), delete_ids.end());
  }
  // Staged rows stay hidden until the commit; a row staged again in the same
  // transaction replaces the earlier one, which stays hidden for good.
  append_hidden(records, [t](uint32_t row) { t->rows.put(row); });
  // A bulk ingest is one transaction: its staged rows are sealed like any writer's,
  // so the growing segment never passes checkpoint_wal_bytes of log.
  maybe_checkpoint();
}

size_t Collection::commit(TxnId txn, bool auto_checkpoint) {
  require_writable();
  size_t n = 0;
  {
    std::lock_guard w(write_mu_);
    if (!log_commit_locked(txn)) return 0;
    n = publish_pending_locked();
  }
  if (auto_checkpoint) maybe_checkpoint();
  return n;
}

bool Collection::log_commit(TxnId txn) {
  require_writable();
  std::lock_guard w(write_mu_);
  return log_commit_locked(txn);
}

size_t Collection::publish_commit(TxnId txn) {
  std::lock_guard w(write_mu_);
  return pending_publish_ == txn ? publish_pending_locked() : 0;
}

bool Collection::log_commit_locked(TxnId txn) {
  publish_pending_locked();
  auto it = txns_.find(txn);
  if (it == txns_.end()) return false;
  if (it->second.failed)
    fail(ErrorCode::conflict, "transaction " + txn_hex(txn) + " failed while it was staged; it cannot commit");
  log(WalOp::txn_commit, wal_ ? txn_hex(txn) : std::string());  // the commit point: durable from here
  pending_publish_ = txn;
  return true;
}

size_t Collection::publish_pending_locked() {
  if (!pending_publish_) return 0;
  const TxnId txn = std::exchange(pending_publish_, 0);
  std::unique_lock lock(mutex_);
  return apply_commit(txn);
}

void Collection::abort(TxnId txn) {
  std::lock_guard w(write_mu_);
  // A transaction whose commit record is logged is committed (replay applies it):
  // it is published, not forgotten.
  if (pending_publish_ == txn) {
    publish_pending_locked();
    return;
  }
  std::unique_lock lock(mutex_);
  // The staged rows are hidden already; they stay tombstones. Nothing is logged:
  // replay skips parts without a commit record.
  txns_.erase(txn);
}

bool Collection::in_transaction() const {
  std::shared_lock lock(mutex_);
  return !txns_.empty();
}

bool Collection::has_transaction(TxnId txn) const {
  std::shared_lock lock(mutex_);
  return txns_.count(txn) > 0;
}

bool Collection::staged(TxnId txn, const std::string& id) const {
  // Under write_mu_ (which every change to txns_ holds), not mutex_: an ingest asks this
  // of every row it reads, and a shared hold would queue behind the graph builder's
  // exclusive one each time (measured: no parallelism left).
  std::lock_guard w(write_mu_);
  auto it = txns_.find(txn);
  return it != txns_.end() && it->second.rows.contains(id);
}

size_t Collection::apply_remove(const std::vector<std::string>& ids) {
  size_t n = 0;
  for (const auto& id : ids) {
    auto row = live_.erase(id);
    if (!row) continue;
    hide(*row);
    ++n;
  }
  return n;
}

// Step 3 of an open, the second pass: every record after `segment_lsn` applied in log
// order, parts of transactions `is_committed` denies skipped, records that cannot be
// applied quarantined.
void Collection::replay_logs(const std::vector<std::pair<uint64_t, fs::path>>& wals, uint64_t segment_lsn,
                             const std::function<bool(TxnId)>& is_committed) {
  const bool ro = opts_.read_only;
  const fs::path& dir = dir_;
  std::map<TxnId, uint64_t> skipped_parts;
  // Read, checked, decoded and analysed a few records ahead on a second thread
  // (read_ahead): this thread only indexes, so a replay uses both cores. A torn tail
  // is cut here, in log order with this thread's other writes, never by the reader.
  const index::Bm25Index analysis(segments_.back().lexical.params(), segments_.back().lexical.analyzer().options());
  read_ahead<ReplayItem>(
      kReplayReadAhead,
      [&](auto&& push) {
        for (size_t f = 0; f < wals.size(); ++f) {
          bool stopped = false;
          const auto st = replay_wal(
              wals[f].second,
              [&](uint64_t lsn, WalOp op, const std::string& payload) {
                if (stopped || lsn <= segment_lsn) return;
                stopped = !push(prepare_replay(lsn, op, payload, analysis));
              },
              /*truncate_torn_tail=*/false);
          if (stopped) return;
          ReplayItem end;
          end.file = f;
          end.file_end = true;
          end.stats = st;
          if (!push(std::move(end))) return;
        }
      },
      [&](ReplayItem& item) {
        const fs::path& file = wals[item.file].second;
        if (item.file_end) {
          const auto& st = item.stats;
          if (ro) return;
          if (st.truncated_tail) {
            fsys().truncate(file, st.bytes);
            spdlog::warn("{}: cut a torn tail of {} bytes (a write a crash interrupted before it was acknowledged) "
                         "after {} intact records", file.string(), st.torn_bytes, st.records);
          }
          wal_bytes_ = st.bytes;
          return;
        }
        if (item.op == WalOp::txn_part) {
          const auto t = part_txn(item.payload);
          if (t && !is_committed(*t)) {
            ++skipped_parts[*t];
            last_lsn_ = item.lsn;
            return;
          }
        }
        try {
          if (item.decode_error) std::rethrow_exception(item.decode_error);
          replay(item);
        } catch (const std::exception& e) {
          // A part that cannot be applied fails its whole transaction.
          if (item.op == WalOp::txn_part)
            if (auto t = part_txn(item.payload)) txn_state(*t).failed = true;
          // Intact but not applicable (written by an older version that logged
          // before validating): never applied, kept aside, said out loud.
          quarantine(file, item.lsn, item.op, item.payload, e.what());
          last_lsn_ = item.lsn;
        }
      });
  for (const auto& [t, parts] : skipped_parts)
    spdlog::warn("{}: skipped {} logged parts of transaction {}, never committed (an interrupted ingest; it was "
                 "never acknowledged)", dir.string(), parts, txn_hex(t));
}

Collection::ReplayItem Collection::prepare_replay(uint64_t lsn, WalOp op, const std::string& payload,
                                                  const index::Bm25Index& analysis) const {
  ReplayItem item(lsn, op, payload);
  if (op == WalOp::txn_commit || !is_binary_write(payload)) return item;
  try {
    item.write = decode_write(payload, schema_);
    item.analyzed.reserve(item.write->records.size());
    for (const auto& r : item.write->records) item.analyzed.push_back(analysis.analyze(r.text));
  } catch (...) {
    // Met in log order by the applying thread, which quarantines the record.
    item.write.reset();
    item.analyzed.clear();
    item.decode_error = std::current_exception();
  }
  return item;
}

void Collection::replay(ReplayItem& item) {
  // Decode the whole record before touching any row: a record that cannot be applied
  // is applied not at all (the caller quarantines it).
  const uint64_t lsn = item.lsn;
  const WalOp op = item.op;
  const std::string& payload = item.payload;
  std::vector<std::string> removes;
  std::vector<Record> records;
  if (op == WalOp::txn_commit) {
    if (auto t = parse_txn_hex(payload)) {
      if (auto it = txns_.find(*t); it != txns_.end() && it->second.failed) {
        spdlog::error("{}: transaction {} had a part that could not be applied; none of it is applied",
                      dir_.string(), txn_hex(*t));
        txns_.erase(it);
      } else {
        apply_commit(*t);
      }
    }
    last_lsn_ = lsn;
    return;
  }
  if (!item.write && is_binary_write(payload)) {  // not decoded ahead
    item.write = decode_write(payload, schema_);
    item.analyzed.clear();
  }
  if (item.write) {
    auto& w = *item.write;
    const auto* analyzed = item.analyzed.empty() ? nullptr : &item.analyzed;
    if (op == WalOp::txn_part) {
      if (w.txn == 0) fail(ErrorCode::invalid_argument, "transaction part without a transaction id");
      apply_staged(w.txn, std::move(w.deletes), w.records, analyzed);
    } else {
      if (!w.deletes.empty()) apply_remove(w.deletes);
      if (!w.records.empty()) apply_insert(w.records, analyzed);
    }
    last_lsn_ = lsn;
    return;
  }
  // Records logged as JSON text (stores written before the binary form).
  if (op == WalOp::txn_part) {
    const auto t = parse_txn_hex(payload);
    const auto nl = payload.find('\n');
    if (!t || nl != 16) fail(ErrorCode::invalid_argument, "transaction part without a transaction id");
    json part = json::parse(std::string_view(payload).substr(17));
    auto deletes = part.at("delete").get<std::vector<std::string>>();
    for (const auto& rj : part.at("upsert")) records.push_back(record_from_json(rj, schema_));
    apply_staged(*t, std::move(deletes), records);
    last_lsn_ = lsn;
    return;
  }
  json j = json::parse(payload);
  if (op == WalOp::delete_ids) {
    removes = j.get<std::vector<std::string>>();
  } else if (op == WalOp::replace) {
    removes = j.at("delete").get<std::vector<std::string>>();
    for (const auto& rj : j.at("upsert")) records.push_back(record_from_json(rj, schema_));
  } else {
    for (const auto& rj : j) records.push_back(record_from_json(rj, schema_));
  }
  if (!removes.empty()) apply_remove(removes);
  if (!records.empty()) apply_insert(records);
  last_lsn_ = lsn;
}

void Collection::quarantine(const fs::path& log, uint64_t lsn, WalOp op, const std::string& payload,
                            const std::string& why) {
  spdlog::error("{}: log record lsn {} cannot be applied ({}); skipped{}", log.string(), lsn, why,
                opts_.read_only ? "" : ", kept in quarantine.jsonl");
  if (opts_.read_only) return;
  // Once per record: the record stays in the log (and is met again) until the next
  // checkpoint.
  const fs::path file = dir_ / "quarantine.jsonl";
  {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      auto seen = json::parse(line, nullptr, false);
      if (!seen.is_discarded() && seen.value("log", "") == log.filename().string() && seen.value("lsn", 0ull) == lsn)
        return;
    }
  }
  json entry = {{"log", log.filename().string()}, {"lsn", lsn}, {"op", static_cast<int>(op)}, {"error", why}};
  // A binary record is kept whole (base64); an older JSON one as its text.
  if (is_binary_write(payload)) entry["payload_base64"] = base64_encode(payload);
  else entry["payload"] = payload;
  const bool created = !fs::exists(file);
  const std::string line = entry.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  auto out = fsys().open_writable(file, io::FileSystem::OpenMode::append);
  out->append(line.data(), line.size());
  out->sync();
  if (created) fsys().sync_path(dir_, true);
}

void Collection::maybe_checkpoint() {
  bool due;
  {
    std::shared_lock lock(mutex_);
    due = wal_ && wal_bytes_ >= opts_.checkpoint_wal_bytes;
  }
  if (due) checkpoint_unlocked();
}

void Collection::checkpoint_if_due() {
  if (!persistent() || read_only()) return;
  std::lock_guard w(write_mu_);
  maybe_checkpoint();
}

void Collection::checkpoint() {
  if (!persistent()) return;
  require_writable();
  std::lock_guard w(write_mu_);
  checkpoint_unlocked();
}

void Collection::checkpoint_unlocked() {
  if (!persistent()) return;
  publish_pending_locked();
  // A sealed segment's graph is whole: the rows the builder has not linked yet are
  // linked here (no row is added meanwhile: writers wait on write_mu_).
  link_all_pending();
  // 1. The files, written while searches go on: writers wait on write_mu_ (held by
  //    our caller), so a shared lock gives a stable state. The active segment (rows
  //    since the last checkpoint) goes to its own file unless a merge takes it; each
  //    merge the policy asks for writes one file; the deletion bitmap is written whole.
  struct Written {
    size_t first;                  // segments [first, first + count) become `segment`
    size_t count;
    std::optional<Segment> merged;  // empty: the active segment itself, sealed as it is
    std::string file;
    std::vector<uint64_t> text_offsets;
    std::unique_ptr<index::VectorIndex> mapped;  // its vector index read in place (map_vectors)
    std::vector<uint64_t> row_offsets;          // a merge's rows in its file, and the file mapped
    std::shared_ptr<const FileMap> rows_map;
  };
  std::vector<Written> written;
  std::string deletions_file;
  json open_txns;
  {
    std::shared_lock lock(mutex_);
    // An open transaction's parts before this point leave with the old log: what they
    // did (rows staged, hidden in the deletion bitmap; deletes pending) is named here.
    open_txns = txns_manifest();
    const size_t active = segments_.size() - 1;
    const bool seal_active = segments_[active].rows() > 0;
    std::vector<uint64_t> sizes;
    for (size_t i = 0; i < segments_.size(); ++i)
      if (i < active || seal_active) sizes.push_back(segments_[i].rows());
    auto merges = opts_.merge_mode == CollectionOptions::Merges::in_checkpoint ? find_merges(sizes, opts_.merges)
                                                                               : std::vector<MergeRange>{};
    const bool active_merged = seal_active && std::any_of(merges.begin(), merges.end(), [&](const MergeRange& m) {
      return m.first + m.count == active + 1;
    });
    if (seal_active && !active_merged) {
      Written w{active, 1, std::nullopt, next_file_name("seg-"), {}, nullptr, {}, nullptr};
      auto out = write_segment(dir_ / w.file, segments_[active], last_lsn_);
      w.text_offsets = std::move(out.text_offsets);
      w.mapped = mapped_vectors(dir_ / w.file, out.vectors_offset, segments_[active].rows());
      written.push_back(std::move(w));
    }
    for (const auto& m : merges) {
      Written w{m.first, m.count, merge_segments(m.first, m.count), next_file_name("seg-"), {}, nullptr, {}, nullptr};
      auto out = write_segment(dir_ / w.file, *w.merged, last_lsn_);
      w.text_offsets = std::move(out.text_offsets);
      w.row_offsets = std::move(out.row_offsets);
      w.rows_map = map_rows_of(dir_ / w.file);
      w.mapped = mapped_vectors(dir_ / w.file, out.vectors_offset, w.merged->rows());
      written.push_back(std::move(w));
    }
    deletions_file = next_file_name("deleted-");
    write_deletions(dir_ / deletions_file);
  }
  // 2. The manifest switches to the new files atomically (it lists every sealed
  //    segment, the new files in the places of what they replace); from here the old
  //    files are garbage. Should it fail, nothing in memory has changed. Written with
  //    no lock readers wait on (write_mu_ keeps the state still).
  std::sort(written.begin(), written.end(), [](const Written& a, const Written& b) { return a.first < b.first; });
  std::set<std::string> named = {deletions_file};
  std::vector<ListedFile> replacing;
  for (const auto& w : written) replacing.push_back({w.first, w.count, w.file});
  write_manifest(manifest_segments(replacing, named), deletions_file, last_lsn_, open_txns);
  // 3. In memory, the only step searches wait for: the sealed and merged segments take
  //    their places (from the last, so earlier positions hold), their rows' texts are
  //    read from the new files, and a new empty active segment follows.
  std::unique_lock lock(mutex_);
  const bool sealed_active = !written.empty() && written.back().first + written.back().count == segments_.size();
  std::vector<SegmentFileSlot> closing;
  for (auto w = written.rbegin(); w != written.rend(); ++w) {
    const SegmentFileSlot slot = texts_->open_segment(dir_ / w->file);
    for (size_t i = w->first; i < w->first + w->count; ++i)
      if (!segments_[i].file.empty()) closing.push_back(segments_[i].slot);
    if (w->merged) {
      auto merged = std::move(*w->merged);
      std::vector<std::shared_ptr<const FileMap>> old_maps;
      for (size_t i = w->first; i < w->first + w->count; ++i)
        old_maps.insert(old_maps.end(), segments_[i].row_maps.begin(), segments_[i].row_maps.end());
      take_row_maps_locked(merged, std::move(old_maps), w->rows_map, w->row_offsets);
      segments_.erase(segments_.begin() + static_cast<std::ptrdiff_t>(w->first + 1),
                      segments_.begin() + static_cast<std::ptrdiff_t>(w->first + w->count));
      segments_[w->first] = std::move(merged);
    }
    auto& seg = segments_[w->first];
    seg.file = w->file;
    seg.slot = slot;
    if (w->mapped) seg.vectors = std::move(w->mapped);
    for (uint32_t i = 0; i < seg.rows(); ++i) {
      auto& ref = rows_.text(seg.base + i);
      ref.offset = w->text_offsets[i];
      ref.file = slot;
      ref.in_spill = 0;
    }
  }
  if (sealed_active) {
    segments_.push_back(new_segment(static_cast<uint32_t>(rows_.size())));
    texts_->empty_spill();  // every spilled text belonged to the active segment, now in its file
  }
  for (auto slot : closing) texts_->close_segment(slot);
  lock.unlock();
  // 4. A fresh log for records after the checkpoint (writers wait on write_mu_, so no
  //    record falls between); then drop what it covers.
  const fs::path new_wal = dir_ / numbered_name("wal-", last_lsn_ + 1, ".log");
  wal_ = std::make_unique<WalWriter>(new_wal, opts_.sync, fsys());
  wal_bytes_ = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path() == new_wal) continue;
    const auto name = e.path().filename().string();
    // A file a background merge is writing is not garbage yet: the merge names it.
    if (numbered(e.path(), "wal-", ".log") || (unnamed_store_file(e.path(), named) && !merge_outputs_.count(name)))
      fsys().remove(e.path());
  }
  fsys().sync_path(dir_, true);
  request_merges_if_due();
}

void Collection::request_merges_if_due() {
  if (opts_.merge_mode != CollectionOptions::Merges::background || read_only()) return;
  std::vector<uint64_t> sizes;
  {
    std::shared_lock lock(mutex_);
    for (const auto& seg : segments_)
      if (!seg.file.empty()) sizes.push_back(seg.rows());
  }
  if (!find_merges(sizes, opts_.merges).empty()) request_merges();
}

json Collection::manifest_segments(const std::vector<ListedFile>& replacing, std::set<std::string>& named) const {
  json listed = json::array();
  for (size_t i = 0, w = 0; i < segments_.size();) {
    if (w < replacing.size() && replacing[w].first == i) {
      uint64_t rows = 0;
      for (size_t j = i; j < i + replacing[w].count; ++j) rows += segments_[j].rows();
      listed.push_back({{"file", replacing[w].file}, {"rows", rows}});
      named.insert(replacing[w].file);
      i += replacing[w].count;
      ++w;
      continue;
    }
    if (!segments_[i].file.empty()) {
      listed.push_back({{"file", segments_[i].file}, {"rows", segments_[i].rows()}});
      named.insert(segments_[i].file);
    }
    ++i;
  }
  return listed;
}

void Collection::write_manifest(const json& listed, const std::string& deletions_file, uint64_t covered_lsn,
                                const json& open_txns) {
  json m = {{"format", 3},
            {"segments", listed},
            {"deleted", deletions_file},
            {"next_file", next_file_},
            {"last_lsn", covered_lsn}};
  if (!open_txns.empty()) m["transactions"] = open_txns;
  io::write_file_atomic(fsys(), dir_ / "MANIFEST", [&](std::ostream& out) { out << with_checksum(m).dump(); });
  // The merger plans from these under a shared lock, without write_mu_.
  std::unique_lock lock(mutex_);
  deletions_file_ = deletions_file;
  covered_lsn_ = covered_lsn;
  manifest_txns_ = open_txns;
}

json Collection::txns_manifest() const {
  json out = json::array();
  for (const auto& [txn, st] : txns_) {
    // A failed transaction can never commit: its rows stay hidden, nothing to name.
    if (st.failed) continue;
    std::vector<uint32_t> rows;
    rows.reserve(st.rows.size());
    st.rows.for_each([&](uint32_t r) { rows.push_back(r); });
    std::sort(rows.begin(), rows.end());
    // [first, end) runs: a bulk ingest's rows are one run per slice at most.
    json ranges = json::array();
    for (size_t i = 0; i < rows.size();) {
      size_t j = i + 1;
      while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
      ranges.push_back({rows[i], rows[j - 1] + 1});
      i = j;
    }
    out.push_back({{"txn", txn_hex(txn)}, {"rows", std::move(ranges)}, {"deletes", st.deletes}});
  }
  return out;
}

void Collection::restore_txns(const json& listed, const std::function<bool(TxnId)>& is_committed) {
  for (const auto& entry : listed) {
    const auto txn = parse_txn_hex(entry.at("txn").get<std::string>());
    if (!txn) fail(ErrorCode::data_loss, (dir_ / "MANIFEST").string() + ": bad transaction id " + entry.at("txn").dump());
    uint64_t staged = 0;
    for (const auto& range : entry.at("rows")) {
      const auto first = range.at(0).get<uint64_t>(), end = range.at(1).get<uint64_t>();
      // Staged rows are sealed and hidden; anything else is a MANIFEST that does not
      // match its segments.
      if (first >= end || end > rows_.size())
        fail(ErrorCode::data_loss, (dir_ / "MANIFEST").string() + ": transaction " + txn_hex(*txn) + " names rows [" +
                                       std::to_string(first) + ", " + std::to_string(end) + ") of " +
                                       std::to_string(rows_.size()));
      for (uint64_t r = first; r < end; ++r)
        if (!deleted_.test(r))
          fail(ErrorCode::data_loss, (dir_ / "MANIFEST").string() + ": row " + std::to_string(r) +
                                         " staged by transaction " + txn_hex(*txn) + " is not hidden");
      staged += end - first;
    }
    if (!is_committed(*txn)) {
      spdlog::warn("{}: {} staged rows of transaction {} were sealed by a checkpoint but never committed (an "
                   "interrupted ingest; never acknowledged): they stay deleted",
                   dir_.string(), staged, txn_hex(*txn));
      continue;
    }
    auto& st = txn_state(*txn);
    for (const auto& range : entry.at("rows"))
      for (uint64_t r = range.at(0).get<uint64_t>(); r < range.at(1).get<uint64_t>(); ++r)
        st.rows.put(static_cast<uint32_t>(r));
    for (const auto& id : entry.at("deletes")) st.deletes.push_back(id.get<std::string>());
  }
}

// ---------------------------------------------------------------- the graph builder

void Collection::wake_linker() {
  std::lock_guard g(linker_mu_);
  if (linker_stop_) return;
  ++linker_work_;  // the builders run from the constructor on (defer_linking_)
  linker_cv_.notify_all();
}

void Collection::stop_linker() {
  {
    std::lock_guard g(linker_mu_);
    linker_stop_ = true;
  }
  linker_cv_.notify_all();
  for (auto& t : linkers_)
    if (t.joinable()) t.join();
}

void Collection::linker_loop() {
  // The process's own priority, not a writer's low one (a thread inherits its
  // creator's): the builder's work is paced by the writer (max_unlinked_rows), and
  // its exclusive holds must not stretch when searches take the cores. At nice 10 a
  // link held up every search queued behind it (priority inversion): 16 clients' p99
  // beside a bulk ingest went from 37.7 to 63.8 ms on the 1M-row store. Without the
  // privilege to raise it back (the thread started at a writer's nice), it stays.
  errno = 0;
  const int base = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::getpid()));
  if (errno == 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), base);
  std::unique_ptr<index::LinkTask> task;  // this builder's working memory
  std::unique_lock g(linker_mu_);
  uint64_t seen = 0;  // the last work announcement this builder answered
  for (;;) {
    linker_cv_.wait(g, [&] { return linker_stop_ || linker_work_ != seen; });
    if (linker_stop_) return;
    seen = linker_work_;
    g.unlock();
    // unlinked_rows_ is read without mutex_: while a checkpoint writes under a shared
    // hold nothing is pending, so the builder never queues an exclusive hold (which
    // would stop new searches) behind a disk write.
    const uint64_t resume = opts_.max_unlinked_rows / 2;
    while (unlinked_rows_.load(std::memory_order_relaxed) > 0) {
      // nullopt: every pending row is claimed (a writer links the last ones); a new
      // row wakes the builder again.
      const auto step = link_step(task);
      if (!step) break;
      const uint64_t left = *step;
      if (linker_stop_) return;
      // A writer waiting for room (wait_for_linker) is told once there is room, not
      // after every link: waking it a link at a time cost both threads a context
      // switch per row.
      if (left == resume || left == 0) {
        std::lock_guard s(linker_mu_);
        linker_cv_.notify_all();
      }
      // The lock is not fair: taken again at once, it would go back to the builder
      // before a writer blocked on it wakes, and the two would take turns a batch at a
      // time instead of a row at a time (measured: no parallelism at all). A writer
      // that announced itself gets its hold first.
      while (writer_waiting_.load(std::memory_order_relaxed) > 0) std::this_thread::yield();
    }
    g.lock();
    linker_cv_.notify_all();
  }
}

std::optional<uint64_t> Collection::link_step(std::unique_ptr<index::LinkTask>& task) {
  std::shared_lock gate(link_mu_);
  // Checked again behind link_mu_: a checkpoint may have linked every row while this
  // waited, and then holds mutex_ shared across its disk writes. An exclusive hold
  // queued behind it would stop every new search until the write's fsync returned
  // (seen as a hang in Readers.SearchWhileACheckpointSyncs...).
  if (unlinked_rows_.load(std::memory_order_relaxed) == 0) return std::nullopt;
  index::VectorIndex* vectors = nullptr;
  {
    // The plan only reads the graph: searches and the other linker's plan go on.
    std::shared_lock lock(mutex_);
    vectors = segments_.back().vectors.get();
    if (!task) task = vectors->new_link_task();
    if (!task || !vectors->plan_link(*task)) return std::nullopt;
  }
  uint64_t left = 0;
  for (;;) {
    uint64_t seen = 0;
    {
      std::unique_lock lock(mutex_);
      // Still the active segment's index: whatever replaces it (a checkpoint's seal,
      // after link_all_pending; compact's swap) holds link_mu_ exclusively first.
      const bool applied = vectors->apply_link(*task);
      std::lock_guard turn(link_turn_mu_);
      if (applied) {
        left = vectors->pending();
        unlinked_rows_.store(left, std::memory_order_relaxed);
        ++links_applied_;
        break;
      }
      seen = links_applied_;
    }
    // The row claimed before this one is still being planned: wait for its link.
    std::unique_lock turn(link_turn_mu_);
    link_turn_cv_.wait(turn, [&] { return links_applied_ != seen; });
  }
  link_turn_cv_.notify_all();
  return left;
}

void Collection::link_all_pending() {
  if (unlinked_rows_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard link(link_mu_);
  // A row per exclusive hold, as the builder: searches go on between them.
  while (link_one() > 0) {
  }
  linker_cv_.notify_all();
}

uint64_t Collection::link_one() {
  std::unique_lock lock(mutex_);
  auto& vectors = *segments_.back().vectors;
  vectors.link_pending(1);
  const uint64_t left = vectors.pending();
  unlinked_rows_.store(left, std::memory_order_relaxed);
  return left;
}

void Collection::wait_for_linker() {
  const uint64_t resume = opts_.max_unlinked_rows / 2;
  // The writer's core would idle here: it links rows beside the builder instead (a
  // bulk ingest is bound by linking). What it cannot claim, the builder has.
  while (opts_.writer_links && !linker_stop_ && unlinked_rows_.load(std::memory_order_relaxed) > resume) {
    if (!link_step(writer_task_)) break;
    rows_linked_by_writers_.fetch_add(1, std::memory_order_relaxed);
  }
  std::unique_lock g(linker_mu_);
  linker_cv_.wait(g, [&] { return linker_stop_ || unlinked_rows_.load(std::memory_order_relaxed) <= resume; });
}

// ---------------------------------------------------------------- background merges

void Collection::request_merges() {
  std::lock_guard g(merge_mu_);
  merge_wanted_ = true;
  if (!merger_.joinable() && !merge_stop_) merger_ = std::thread([this] { merger_loop(); });
  merge_cv_.notify_all();
}

void Collection::pause_merges(bool paused) {
  {
    std::lock_guard g(merge_mu_);
    merge_paused_ = paused;
  }
  merge_cv_.notify_all();
}

void Collection::wait_for_merges() {
  std::unique_lock g(merge_mu_);
  merge_cv_.wait(g, [&] { return merge_paused_ || merge_stop_ || (!merge_wanted_ && !merge_running_); });
}

size_t Collection::merge_now() {
  if (!persistent() || read_only()) return 0;
  size_t n = 0;
  while (run_one_merge()) ++n;
  return n;
}

bool Collection::merge_abandoned() const {
  std::lock_guard g(const_cast<std::mutex&>(merge_mu_));
  return merge_paused_ || merge_stop_;
}

void Collection::merger_loop() {
  // Low priority: a merge leaves the cores to searches and writes (this thread only).
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
  std::unique_lock g(merge_mu_);
  for (;;) {
    merge_cv_.wait(g, [&] { return merge_stop_ || (merge_wanted_ && !merge_paused_); });
    if (merge_stop_) return;
    merge_wanted_ = false;
    merge_running_ = true;
    g.unlock();
    bool merged = false;
    try {
      merged = run_one_merge();
    } catch (const std::exception& e) {
      // Nothing was published (or the manifest names the new file whole): the next
      // checkpoint asks again.
      spdlog::warn("{}: a background merge failed: {}", dir_.string(), e.what());
    }
    g.lock();
    merge_running_ = false;
    if (merged) merge_wanted_ = true;  // the policy may ask for another
    merge_cv_.notify_all();
  }
}

bool Collection::run_one_merge() {
  std::lock_guard run(merge_run_mu_);
  // 1. The plan, over the sealed segments (the active one takes writes).
  size_t first = 0, count = 0;
  std::vector<std::string> files;
  uint32_t base = 0, end = 0;
  {
    std::shared_lock lock(mutex_);
    if (deletions_file_.empty()) return false;  // an older format's store: its first checkpoint comes first
    std::vector<uint64_t> sizes;
    for (size_t i = 0; i < segments_.size() && !segments_[i].file.empty(); ++i) sizes.push_back(segments_[i].rows());
    const auto merges = find_merges(sizes, opts_.merges);
    if (merges.empty()) return false;
    first = merges.front().first;
    count = merges.front().count;
    for (size_t i = first; i < first + count; ++i) files.push_back(segments_[i].file);
    base = segments_[first].base;
    end = segments_[first + count - 1].base + segments_[first + count - 1].rows();
  }
  // 2. The merged segment, built a batch at a time under brief shared locks.
  auto built = build_merged(base, end, /*lock_per_batch=*/true);
  if (!built) return false;
  Segment merged = std::move(*built);
  std::string file;
  uint64_t lsn = 0;  // the segment holds rows the manifest already covers
  {
    std::lock_guard w(write_mu_);
    file = next_file_name("seg-");
    lsn = covered_lsn_;
    merge_outputs_.insert(file);  // a checkpoint's clean-up leaves it alone
  }
  struct Unlisted {  // however the merge ends, the name is no longer in progress
    Collection* c;
    std::string file;
    ~Unlisted() { c->merge_outputs_.erase(file); }  // runs with write_mu_ held (declared after the lock below)
  };
  std::vector<uint64_t> offsets, row_offsets;
  std::unique_ptr<index::VectorIndex> mapped;
  std::shared_ptr<const FileMap> rows_map;
  try {
    auto out = write_segment(dir_ / file, merged, lsn, /*lock_per_batch=*/true);
    offsets = std::move(out.text_offsets);
    row_offsets = std::move(out.row_offsets);
    rows_map = map_rows_of(dir_ / file);
    mapped = mapped_vectors(dir_ / file, out.vectors_offset, merged.rows());
  } catch (...) {
    std::lock_guard w(write_mu_);
    merge_outputs_.erase(file);
    throw;
  }
  // 3. Published under the exclusive lock, if the segments are still those planned (a
  //    compaction takes merge_run_mu_, so they are, unless the store was reset).
  std::lock_guard w(write_mu_);
  const Unlisted unlisted{this, file};
  bool same = first + count < segments_.size();
  for (size_t i = 0; same && i < count; ++i) same = segments_[first + i].file == files[i];
  if (!same || merge_abandoned()) {
    fsys().remove(dir_ / file);
    return false;
  }
  std::set<std::string> named = {deletions_file_};
  // The files cover what they covered: records after the last checkpoint are still
  // only in the log (and the active segment), so the manifest's lsn stays.
  write_manifest(manifest_segments({{first, count, file}}, named), deletions_file_, covered_lsn_, manifest_txns_);
  // In memory, the only step searches wait for.
  std::unique_lock lock(mutex_);
  count_hidden(merged);
  std::vector<SegmentFileSlot> closing;
  std::vector<std::shared_ptr<const FileMap>> old_maps;
  for (size_t i = first; i < first + count; ++i) {
    closing.push_back(segments_[i].slot);
    old_maps.insert(old_maps.end(), segments_[i].row_maps.begin(), segments_[i].row_maps.end());
  }
  take_row_maps_locked(merged, std::move(old_maps), rows_map, row_offsets);
  merged.file = file;
  merged.slot = texts_->open_segment(dir_ / file);
  if (mapped) merged.vectors = std::move(mapped);
  for (uint32_t r = base; r < end; ++r) {
    auto& ref = rows_.text(r);
    ref.offset = offsets[r - base];
    ref.file = merged.slot;
    ref.in_spill = 0;
  }
  segments_.erase(segments_.begin() + static_cast<std::ptrdiff_t>(first + 1),
                  segments_.begin() + static_cast<std::ptrdiff_t>(first + count));
  segments_[first] = std::move(merged);
  for (auto slot : closing) texts_->close_segment(slot);
  lock.unlock();
  for (const auto& old : files)
    if (!named.count(old)) fsys().remove(dir_ / old);
  fsys().sync_path(dir_, true);
  return true;
}

namespace {
// Counts the bytes written through it to another stream buffer (where a section of a
// file being written starts, through a stream that cannot tell its position).
class CountingStreamBuf : public std::streambuf {
 public:
  explicit CountingStreamBuf(std::streambuf* to) : to_(to) {}
  uint64_t count() const { return count_; }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    if (traits_type::eq_int_type(to_->sputc(traits_type::to_char_type(c)), traits_type::eof()))
      return traits_type::eof();
    ++count_;
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const auto written = to_->sputn(s, n);
    count_ += static_cast<uint64_t>(written);
    return written;
  }
  int sync() override { return to_->pubsync(); }

 private:
  std::streambuf* to_;
  uint64_t count_ = 0;
};
}  // namespace

Collection::WrittenSegment Collection::write_segment(const fs::path& file, const Segment& seg, uint64_t lsn,
                                                     bool lock_per_batch) const {
  // Where each row's text lands in the file (its first byte), counted
  // as written: the checkpoint moves the rows' text references there.
  WrittenSegment written;
  auto& text_offsets = written.text_offsets;
  text_offsets.reserve(seg.rows());
  write_checked_file(fsys(), file, [&](std::ostream& out) {
    out.write(kSegMagic3, sizeof(kSegMagic3));
    io::write_pod<uint64_t>(out, lsn);
    io::write_pod<uint64_t>(out, seg.rows());
    uint64_t at = kSegHeaderBytes;
    std::optional<std::shared_lock<RwMutex>> batch_lock;
    auto batch_locked = [&](uint32_t r) {
      if (lock_per_batch && (r - seg.base) % 4096 == 0) {
        batch_lock.reset();
        batch_lock.emplace(mutex_);
      }
    };
    // The rows, their texts stated by length and CRC (the references hold both).
    written.row_offsets.reserve(seg.rows());
    for (uint32_t r = seg.base; r < seg.base + seg.rows(); ++r) {
      batch_locked(r);
      written.row_offsets.push_back(at);
      const std::string_view id = rows_.id(r);  // below 4 GiB, as RowTable keeps them
      const std::string_view values = rows_.encoded_values(r);  // already encode_values' form
      const TextRef& ref = rows_.text(r);
      io::write_pod<uint32_t>(out, static_cast<uint32_t>(id.size()));
      out.write(id.data(), static_cast<std::streamsize>(id.size()));
      io::write_pod<uint32_t>(out, static_cast<uint32_t>(values.size()));
      out.write(values.data(), static_cast<std::streamsize>(values.size()));
      io::write_pod<uint32_t>(out, ref.crc);
      io::write_pod<uint32_t>(out, ref.length);
      // The row's deletion as of this write (format 3 reads deletions from the
      // deletions file; the flag keeps the row layout of format 2).
      io::write_pod<uint8_t>(out, deleted_.test(r) ? 1 : 0);
      at += 4 * sizeof(uint32_t) + id.size() + values.size() + 1;
    }
    batch_lock.reset();
    const uint64_t texts_offset = at;
    std::string text;
    for (uint32_t r = seg.base; r < seg.base + seg.rows(); ++r) {
      batch_locked(r);
      const TextRef& ref = rows_.text(r);
      texts_->read_into(ref, text);  // checked against ref.crc, the CRC written above
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      text_offsets.push_back(at);
      at += text.size();
    }
    batch_lock.reset();
    const uint64_t bm25_offset = at;
    {
      CountingStreamBuf counting(out.rdbuf());
      std::ostream counted(&counting);
      seg.lexical.save(counted);
      counted.flush();
      at += counting.count();
    }
    written.vectors_offset = at;
    seg.vectors->save(out);
    io::write_pod<uint64_t>(out, texts_offset);
    io::write_pod<uint64_t>(out, bm25_offset);
    io::write_pod<uint64_t>(out, written.vectors_offset);
    out.write(kSectionsMagic, sizeof(kSectionsMagic));
  });
  return written;
}

void Collection::take_row_maps_locked(Segment& merged, std::vector<std::shared_ptr<const FileMap>> from,
                                      const std::shared_ptr<const FileMap>& map,
                                      const std::vector<uint64_t>& row_offsets) {
  if (!map || row_offsets.size() != merged.rows()) {
    merged.row_maps = std::move(from);
    return;
  }
  const char* bytes = reinterpret_cast<const char*>(map->data());
  for (uint32_t i = 0; i < merged.rows(); ++i) rows_.repoint(merged.base + i, bytes + row_offsets[i]);
  merged.row_maps = {map};
}

bool Collection::maps_vectors(uint64_t rows) const { return opts_.map_vectors && rows >= opts_.map_vectors_min_rows; }

std::unique_ptr<index::VectorIndex> Collection::mapped_vectors(const fs::path& file, uint64_t offset,
                                                               uint64_t rows) const {
  if (!maps_vectors(rows)) return nullptr;
  // The index just written, read back in place: its node blocks come from the page
  // cache and the heap copy can go. A failure here loses nothing (the file is whole
  // and named); the copy in memory stays.
  try {
    std::ifstream in(file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in) return nullptr;
    // Written by us just now: not checksummed or walked again, so no page of it is read
    // (and resident beside the copy in memory) until a search needs it. An open of the
    // store verifies it whole, as every segment.
    return index::load_vector_index(in, FileMap::open(file), /*verify_mapped=*/false);
  } catch (const std::exception& e) {
    spdlog::warn("{}: keeping its vector index in memory: {}", file.string(), e.what());
    return nullptr;
  }
}

std::optional<Collection::Segment> Collection::build_merged(uint32_t base, uint32_t end, bool lock_per_batch) const {
  // A batch at a time, so a merge never holds every vector of its rows at once; a
  // background merge reads each batch under a brief shared lock (sealed rows never
  // change; only the vectors of rows and of segments may grow meanwhile) and indexes it
  // outside.
  Segment merged = new_segment(base);
  constexpr uint32_t kBatch = 4096;
  const uint32_t dim = schema_.vector.dim;
  std::vector<std::string> texts;
  std::vector<float> vecs;
  for (uint32_t from = base; from < end; from += kBatch) {
    const uint32_t to = std::min(end, from + kBatch);
    texts.resize(to - from);
    vecs.resize(size_t{to - from} * dim);
    {
      std::optional<std::shared_lock<RwMutex>> lock;
      if (lock_per_batch) {
        lock.emplace(mutex_);
        if (merge_abandoned()) return std::nullopt;
      }
      for (uint32_t r = from; r < to; ++r) {
        texts_->read_into(rows_.text(r), texts[r - from]);
        const auto& seg = segment_of(r);
        seg.vectors->stored_vector(r - seg.base, vecs.data() + size_t{r - from} * dim);
      }
    }
    for (const auto& t : texts) merged.lexical.add(t);
    merged.vectors->add_batch(from - base, to - from, vecs.data());
  }
  return merged;
}

void Collection::count_hidden(Segment& seg) const {
  deleted_.for_each_in(seg.base, seg.base + seg.rows(), [&](size_t r) {
    ++seg.hidden_docs;
    seg.hidden_len += seg.lexical.doc_len(static_cast<index::DocId>(r - seg.base));
  });
}

Collection::Segment Collection::merge_segments(size_t first, size_t count) const {
  const Segment& z = segments_[first + count - 1];
  auto merged = build_merged(segments_[first].base, z.base + z.rows(), /*lock_per_batch=*/false);
  count_hidden(*merged);
  return std::move(*merged);
}

namespace {
constexpr char kDeletionsMagic[8] = {'E', 'G', 'L', 'D', 'E', 'L', '1', '\0'};
}  // namespace

void Collection::write_deletions(const fs::path& file) const {
  write_checked_file(fsys(), file, [&](std::ostream& out) {
    out.write(kDeletionsMagic, sizeof(kDeletionsMagic));
    io::write_pod<uint64_t>(out, rows_.size());
    io::write_vec(out, deleted_.words());
  });
}

void Collection::load_deletions(const fs::path& file) {
  if (!fs::exists(file)) fail(ErrorCode::data_loss, "deletions file named by MANIFEST is missing: " + file.string());
  verify_checked_file(file);
  std::ifstream in(file, std::ios::binary);
  try {
    char magic[sizeof(kDeletionsMagic)];
    if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kDeletionsMagic, sizeof(magic)) != 0)
      fail(ErrorCode::invalid_argument, "bad deletions magic");
    const auto rows = io::read_pod<uint64_t>(in, "row count");
    if (rows != rows_.size())
      fail(ErrorCode::data_loss, "covers " + std::to_string(rows) + " rows, the segments hold " +
                                     std::to_string(rows_.size()));
    const auto words = io::read_vec<uint64_t>(in, "deletion bits");
    if (words.size() != (rows + 63) / 64) fail(ErrorCode::invalid_argument, "deletion bits of the wrong length");
    deleted_ = Bitset(rows);
    for (size_t w = 0; w < words.size(); ++w)
      for (uint64_t bits = words[w]; bits; bits &= bits - 1) {
        const size_t r = w * 64 + static_cast<size_t>(std::countr_zero(bits));
        if (r < rows) deleted_.set(r);
      }
  } catch (const Error& e) {
    fail(e.code(), file.string() + ": " + e.what());
  }
}

void Collection::load_rows_layout1(std::istream& in, uint32_t base, uint64_t n, SegmentFileSlot slot,
                                   bool flags_are_deletions,
                                   const std::function<void(uint32_t, const std::vector<Value>&)>& index_scalars) {
  // Texts stay in the file, referenced by offset (row_texts.h): `at` follows the
  // reads to know where each text's bytes are.
  uint64_t at = kSegHeaderBytes;
  std::string id;
  for (uint32_t r = base; r < base + n; ++r) {
    io::read_str_into(in, id, "row id");
    at += sizeof(uint64_t) + id.size();
    const std::string text_bytes = io::read_str(in, "row text");
    at += sizeof(uint64_t);
    const TextRef text = RowTexts::segment_ref(at, text_bytes, slot);
    at += text_bytes.size();
    if (io::read_pod<uint8_t>(in, "row flag") && flags_are_deletions) deleted_.set(r);
    const std::string dumped = io::read_str(in, "row values");
    at += 1 + sizeof(uint64_t) + dumped.size();
    auto vals = json::parse(dumped);
    if (!vals.is_array() || vals.size() != schema_.fields.size())
      fail(ErrorCode::invalid_argument, "row values do not match the schema");
    std::vector<Value> values;
    values.reserve(vals.size());
    for (size_t i = 0; i < vals.size(); ++i)
      values.push_back(value_from_json(vals[i], schema_.fields[i].type, schema_.fields[i].name));
    rows_.append(id, text, values, schema_);
    index_scalars(r, values);
  }
}

Collection::Segment Collection::parse_segment(std::istream& in, const fs::path& file, const fs::path& opened,
                                             const std::shared_ptr<const FileMap>& map, SegmentFileSlot slot,
                                             bool checked, bool flags_are_deletions) {
  char magic[sizeof(kSegMagic)];
  if (!in.read(magic, sizeof(magic)))
    fail(ErrorCode::invalid_argument, "bad segment magic");
  const int layout = std::memcmp(magic, kSegMagic3, sizeof(magic)) == 0   ? 3
                     : std::memcmp(magic, kSegMagic2, sizeof(magic)) == 0 ? 2
                     : std::memcmp(magic, kSegMagic, sizeof(magic)) == 0  ? 1
                                                                          : 0;
  if (layout == 0) fail(ErrorCode::invalid_argument, "bad segment magic");
  io::read_pod<uint64_t>(in, "segment lsn");
  const auto n = io::read_pod<uint64_t>(in, "row count");
  // Each row takes at least 25 bytes (id and text lengths, flag, values length; 17
  // in layout 3): a count the file cannot hold is damage, found before anything is
  // allocated.
  std::error_code size_ec;
  const uint64_t file_bytes = fs::file_size(file, size_ec);
  const uint64_t min_row_bytes = layout == 3 ? 17 : 25;
  if (n > io::kMaxElements || (!size_ec && n > file_bytes / min_row_bytes) || rows_.size() + n > index::kMaxVectorRows)
    fail(ErrorCode::invalid_argument, "corrupt row count " + std::to_string(n));
  const auto base = static_cast<uint32_t>(rows_.size());
  rows_.reserve(base + n);
  deleted_.resize(base + n);
  // The scalar indexes take the segment's rows in one batch each (ScalarIndex::Batch).
  std::vector<std::optional<filter::ScalarIndex::Batch>> scalar_batches(scalar_.size());
  for (size_t i = 0; i < scalar_.size(); ++i)
    if (scalar_[i]) scalar_batches[i].emplace(*scalar_[i]);
  auto index_scalars = [&](uint32_t r, const std::vector<Value>& values) {
    for (size_t i = 0; i < scalar_.size(); ++i)
      if (scalar_batches[i]) scalar_batches[i]->add(r, values[i]);
  };
  Segment seg;
  seg.base = base;
  // Layout 3: the indexes are read on another core while this one scans the rows;
  // declared after `seg` and `map`, so an error here waits for that reader before
  // they go.
  std::future<void> indexes_read;
  if (layout >= 2) {
    // Read in place from the mapped file: ids and values viewed where they lie (a
    // stream spent a second on a million rows' small reads), only the indexed values
    // decoded. A text is not read: its reference carries the length and CRC the file
    // states, and a read of it checks the CRC.
    const char* bytes = reinterpret_cast<const char*>(map->data());
    uint64_t rows_end = map->size();  // layout 2: the rows run until the BM25 index
    uint64_t texts_offset = 0, bm25_offset = 0, vectors_offset = 0;
    if (layout == 3) {
      const uint64_t content = checked_content_length(file, bytes, map->size());
      if (content < kSegHeaderBytes + kSectionTableBytes) fail(ErrorCode::invalid_argument, "no section table");
      io::SpanReader table(bytes, content, content - kSectionTableBytes);
      texts_offset = table.pod<uint64_t>("section table");
      bm25_offset = table.pod<uint64_t>("section table");
      vectors_offset = table.pod<uint64_t>("section table");
      if (table.bytes(sizeof(kSectionsMagic), "section table") != std::string_view(kSectionsMagic, sizeof(kSectionsMagic)) ||
          texts_offset < kSegHeaderBytes || bm25_offset < texts_offset || vectors_offset < bm25_offset ||
          vectors_offset > content - kSectionTableBytes)
        fail(ErrorCode::invalid_argument, "corrupt section table");
      rows_end = texts_offset;
      indexes_read = std::async(std::launch::async, [&, bm25_offset, vectors_offset, content] {
        std::ifstream indexes(opened, std::ios::binary);
        if (!indexes) fail(ErrorCode::unavailable, "cannot open " + file.string());
        indexes.seekg(static_cast<std::streamoff>(bm25_offset));
        seg.lexical = index::Bm25Index::load(indexes);
        if (static_cast<uint64_t>(indexes.tellg()) != vectors_offset)
          fail(ErrorCode::invalid_argument, "the BM25 index does not end where the section table says");
        // Mapped, a sealed segment's vectors and graph stay in the page cache instead
        // of the heap (CollectionOptions::map_vectors). The mapped node blocks are not
        // checksummed and walked again here: the file's block checksums, verified
        // before this segment is used, cover every byte of them (they were 40% of
        // this reader's time on a 1M-row segment, and touched every page of the graph).
        seg.vectors = index::load_vector_index(indexes, maps_vectors(n) ? map : nullptr, /*verify_mapped=*/!checked);
        if (static_cast<uint64_t>(indexes.tellg()) != content - kSectionTableBytes)
          fail(ErrorCode::invalid_argument, "the vector index does not end where the section table says");
      });
    }
    std::vector<bool> indexed(scalar_.size());
    for (size_t i = 0; i < scalar_.size(); ++i) indexed[i] = scalar_[i] != nullptr;
    std::vector<Value> values;
    io::SpanReader rows(bytes, rows_end, kSegHeaderBytes);
    uint64_t text_at = texts_offset;  // layout 3: the next text's first byte
    if (layout == 3) seg.row_maps.push_back(map);  // its rows are appended in place
    for (uint32_t r = base; r < base + n; ++r) {
      if (layout == 3) {
        const char* record = bytes + rows.offset();
        rows.bytes(rows.pod<uint32_t>("row id length"), "row id");
        const std::string_view encoded = rows.bytes(rows.pod<uint32_t>("row values length"), "row values");
        const auto crc = rows.pod<uint32_t>("row text crc");
        const auto length = rows.pod<uint32_t>("row text length");
        if (length > bm25_offset - text_at)
          fail(ErrorCode::invalid_argument, "row text length " + std::to_string(length) + " past its section");
        if (rows.pod<uint8_t>("row flag") && flags_are_deletions) deleted_.set(r);
        check_values(encoded, schema_, indexed, values);  // checked before they are kept
        rows_.append_in_place(record, RowTexts::segment_ref(text_at, length, crc, slot));
        text_at += length;
      } else {
        const std::string_view row_id = rows.str("row id");
        const auto crc = rows.pod<uint32_t>("row text crc");
        const auto length = rows.pod<uint64_t>("row text length");
        if (length > UINT32_MAX)
          fail(ErrorCode::invalid_argument, "row text length " + std::to_string(length) + " past the file");
        const TextRef text = RowTexts::segment_ref(rows.offset(), static_cast<uint32_t>(length), crc, slot);
        rows.bytes(length, "row text");
        if (rows.pod<uint8_t>("row flag") && flags_are_deletions) deleted_.set(r);
        const std::string_view encoded = rows.str("row values");
        check_values(encoded, schema_, indexed, values);  // checked before they are kept
        rows_.append_encoded(row_id, text, encoded);
      }
      index_scalars(r, values);
    }
    if (layout == 3 && (rows.offset() != texts_offset || text_at != bm25_offset))
      fail(ErrorCode::invalid_argument, "the rows do not fill their sections");
    in.seekg(static_cast<std::streamoff>(rows.offset()));
  } else {
    load_rows_layout1(in, base, n, slot, flags_are_deletions, index_scalars);
  }
  // Sorted and merged on the other core while this one reads the lexical and vector
  // indexes (the two touch nothing in common); joined before the segment is returned.
  auto scalar_done = std::async(std::launch::async, [&] {
    for (auto& batch : scalar_batches)
      if (batch) batch->finish();
  });
  if (indexes_read.valid()) {
    indexes_read.get();
  } else {
    seg.lexical = index::Bm25Index::load(in);
    seg.vectors = index::load_vector_index(in, maps_vectors(n) ? map : nullptr);
  }
  seg.file = file.filename().string();
  seg.slot = slot;
  if (seg.lexical.size() != n || !seg.vectors || seg.vectors->size() != n)
    fail(ErrorCode::invalid_argument, "segment indexes disagree with the row count");
  // Every vector read and every query is sized by the schema: a segment of another
  // shape (damage, or another collection's) is refused, never indexed out of bounds.
  if (seg.vectors->dim() != schema_.vector.dim || seg.vectors->metric() != schema_.vector.metric)
    fail(ErrorCode::data_loss, "the vector index has dimension " + std::to_string(seg.vectors->dim()) + " (" +
                                   std::string(metric_name(seg.vectors->metric())) + "), the schema " +
                                   std::to_string(schema_.vector.dim) + " (" +
                                   std::string(metric_name(schema_.vector.metric)) + ")");
  scalar_done.get();
  return seg;
}

Collection::Segment Collection::load_segment(const fs::path& file, bool checked, bool flags_are_deletions) {
  if (!fs::exists(file)) fail(ErrorCode::data_loss, "segment named by MANIFEST is missing: " + file.string());
  // The descriptor the rows' texts will be read through is opened first, and the
  // verification and the load read through it: a compaction may rename a new segment
  // over this name meanwhile, and offsets from one file must not be used on the other.
  const SegmentFileSlot slot = texts_->open_segment(file);
  const fs::path opened = texts_->opened_path(slot);
  // The checksums are verified on another core while this one parses (an open of a
  // 1M-row segment spends a quarter of a second on them). The parse checks every count
  // and offset it reads, so damage cannot make it crash; damage found by the checksums
  // is the error reported, whatever the parse made of the bytes, and nothing parsed is
  // used before the checksums have passed.
  // Layout 3 states where its texts lie (the section table): their blocks are left to
  // the check each text's own CRC gets when it is read.
  std::shared_ptr<const FileMap> map = FileMap::open(opened);
  std::pair<uint64_t, uint64_t> texts_range{0, 0};
  if (checked && map->size() >= sizeof(kSegMagic3) && std::memcmp(map->data(), kSegMagic3, sizeof(kSegMagic3)) == 0) {
    const char* bytes = reinterpret_cast<const char*>(map->data());
    const uint64_t content = checked_content_length(file, bytes, map->size());
    if (content >= kSegHeaderBytes + kSectionTableBytes) {
      uint64_t table[2];
      std::memcpy(table, bytes + content - kSectionTableBytes, sizeof(table));
      if (table[0] <= table[1] && table[1] <= content) texts_range = {table[0], table[1]};
    }
  }
  std::future<void> verified;
  if (checked) verified = std::async(std::launch::async, [&] { verify_checked_file(file, opened, texts_range); });
  auto checksums_first = [&] {
    if (verified.valid()) verified.get();  // throws data_loss for a damaged file
  };
  std::ifstream in(opened, std::ios::binary);
  if (!in) {
    checksums_first();
    fail(ErrorCode::unavailable, "cannot open " + file.string());
  }
  Segment seg;
  try {
    seg = parse_segment(in, file, opened, map, slot, checked, flags_are_deletions);
  } catch (const Error& e) {
    checksums_first();
    fail(e.code(), file.string() + ": " + e.what());
  } catch (const json::exception& e) {
    checksums_first();
    fail(ErrorCode::invalid_argument, file.string() + ": " + e.what());
  }
  checksums_first();
  return seg;
}

namespace {
// What a filter compiles against: the collection's rows and scalar indexes.
class CollectionTarget : public filter::FilterTarget {
 public:
  CollectionTarget(const std::vector<std::unique_ptr<filter::ScalarIndex>>& scalar, const RowTable& rows,
                   const CollectionSchema& schema)
      : rows_(rows.size()), scalar_(scalar), adapter_(rows, schema) {}
  size_t row_count() const override { return rows_; }
  const filter::ScalarIndex* index(size_t field) const override { return scalar_[field].get(); }
  const filter::RowView& row(uint32_t r) const override {
    adapter_.bind(r);
    return adapter_;
  }

 private:
  size_t rows_;
  const std::vector<std::unique_ptr<filter::ScalarIndex>>& scalar_;
  mutable RowAdapter adapter_;
};
}  // namespace

Bitset Collection::filter_locked(std::string_view expr, const TemplateParams& params) const {
  Bitset live(rows_.size(), true);
  live.subtract(deleted_);
  if (expr.find_first_not_of(" \t\r\n") == std::string_view::npos) return live;
  auto parsed = filter::parse(expr, schema_, params);
  CollectionTarget target(scalar_, rows_, schema_);
  // Deleted rows are never read by the row-by-row fallback.
  return filter::compile(parsed, target, live);
}

std::optional<Bitset> Collection::allowed_locked(std::string_view expr, const TemplateParams& params) const {
  const bool no_filter = expr.find_first_not_of(" \t\r\n") == std::string_view::npos;
  if (no_filter && !deleted_.any()) return std::nullopt;
  return filter_locked(expr, params);
}

Record Collection::row_record(uint32_t row) const {
  return Record{std::string(rows_.id(row)), texts_->read(rows_.text(row)), {},
                decode_values(rows_.encoded_values(row), schema_)};
}

size_t Collection::count() const {
  std::shared_lock lock(mutex_);
  return live_.size();
}

std::optional<Record> Collection::get(const std::string& id) const {
  std::shared_lock lock(mutex_);
  const auto found = live_.find(id);
  if (!found) return std::nullopt;
  return row_record(*found);
}

std::optional<Record> Collection::get_with_vector(const std::string& id) const {
  std::shared_lock lock(mutex_);
  const auto found = live_.find(id);
  if (!found) return std::nullopt;
  Record out = row_record(*found);
  out.vector.resize(schema_.vector.dim);
  const auto& seg = segment_of(*found);
  seg.vectors->stored_vector(*found - seg.base, out.vector.data());
  return out;
}

std::optional<Record> Collection::get(const std::string& id, std::string_view expr,
                                      const TemplateParams& params) const {
  if (expr.find_first_not_of(" \t\r\n") == std::string_view::npos) return get(id);
  auto parsed = filter::parse(expr, schema_, params);
  std::shared_lock lock(mutex_);
  const auto found = live_.find(id);
  if (!found) return std::nullopt;
  RowAdapter view(rows_, schema_);
  view.bind(*found);
  if (!filter::evaluate(parsed, view)) return std::nullopt;
  return row_record(*found);
}

std::vector<std::string> Collection::ids_where_equals(const std::string& field, const std::string& value) const {
  std::vector<std::string> out;
  for (auto& [id, v] : ids_where_in(field, {value})) out.push_back(std::move(id));
  return out;
}

std::vector<std::pair<std::string, std::string>> Collection::ids_where_in(
    const std::string& field, const std::vector<std::string>& values) const {
  auto idx = schema_.field_index(field);
  if (!idx) fail(ErrorCode::invalid_argument, "collection '" + schema_.name + "' has no field '" + field + "'");
  std::vector<std::pair<std::string, std::string>> out;
  if (values.empty()) return out;
  std::shared_lock lock(mutex_);
  Bitset rows = filter_locked(field + " in {v}", {{"v", values}});
  rows.for_each([&](size_t r) {
    const auto row = static_cast<uint32_t>(r);
    const Value v = rows_.value(row, *idx, schema_);
    const auto* str = std::get_if<std::string>(&v);
    out.emplace_back(rows_.id(row), str ? *str : std::string());
  });
  return out;
}

void Collection::compact() {
  if (!persistent()) return;
  require_writable();
  std::lock_guard run(merge_run_mu_);  // no merge while rows are renumbered
  std::lock_guard w(write_mu_);
  publish_pending_locked();
  if (in_transaction())
    fail(ErrorCode::conflict, "collection '" + schema_.name + "' has an open transaction; compact after it ends");
  {
    // Rebuild every index from the live rows (vectors as the index stores them), then
    // swap it in; the log is unchanged until the checkpoint below makes it obsolete.
    std::shared_lock read(mutex_);
    if (!deleted_.any()) {
      read.unlock();
      checkpoint_unlocked();
      return;
    }
  }
  // Its rows are linked as they are added: the fresh collection is private (no builder).
  CollectionOptions fresh_opts = opts_;
  fresh_opts.background_linking = false;
  std::unique_ptr<Collection> fresh(new Collection(schema_, fresh_opts, {}));
  // Its texts become ours: spilled in our folder, not the temporary one (often RAM).
  fresh->texts_ = std::make_unique<RowTexts>(dir_);
  {
    // In batches: the texts come off disk (row_texts.h) and go back to it, so the
    // rebuild never holds every text in memory.
    constexpr size_t kBatch = 4096;
    std::shared_lock read(mutex_);
    std::vector<Record> live;
    live.reserve(kBatch);
    std::vector<float> v(schema_.vector.dim);
    for (uint32_t r = 0; r < rows_.size(); ++r) {
      if (deleted_.test(r)) continue;
      const auto& seg = segment_of(r);
      seg.vectors->stored_vector(r - seg.base, v.data());
      live.push_back(row_record(r));
      live.back().vector = v;
      if (live.size() == kBatch) {
        fresh->apply_insert(live);
        live.clear();
      }
    }
    fresh->apply_insert(live);
  }
  {
    // No link may be planned on the segments replaced here (link_step keeps the index
    // it planned on until it applies): the linkers' gate first.
    std::lock_guard link(link_mu_);
    std::unique_lock lock(mutex_);
    rows_ = std::move(fresh->rows_);
    texts_ = std::move(fresh->texts_);  // the rows' texts are in the fresh collection's spill
    deleted_ = std::move(fresh->deleted_);
    // The id index keys the rows it is built over: rebuilt over these.
    live_.clear();
    live_.reserve(fresh->live_.size());
    for (uint32_t r = 0; r < rows_.size(); ++r)
      if (!deleted_.test(r)) live_.put(r);
    segments_ = std::move(fresh->segments_);
    scalar_ = std::move(fresh->scalar_);
    unlinked_rows_.store(segments_.back().vectors->pending(), std::memory_order_relaxed);
  }
  checkpoint_unlocked();
}

std::vector<Record> Collection::records(const std::vector<CollectionHit>& hits) const {
  std::shared_lock lock(mutex_);
  std::vector<Record> out;
  out.reserve(hits.size());
  for (const auto& h : hits) {
    if (h.row >= rows_.size()) fail(ErrorCode::invalid_argument, "row out of range");
    out.push_back(row_record(h.row));
  }
  return out;
}

std::vector<Record> Collection::fetch(std::string_view expr, const TemplateParams& params, size_t limit) const {
  if (limit > kMaxSearchK) fail(ErrorCode::invalid_argument, "fetch limit must be at most " + std::to_string(kMaxSearchK));
  std::shared_lock lock(mutex_);
  std::vector<Record> out;
  filter_locked(expr, params).for_each([&](size_t r) {
    if (out.size() < limit) out.push_back(row_record(static_cast<uint32_t>(r)));
  });
  return out;
}

std::vector<Record> Collection::scan(size_t from, size_t limit, size_t* next) const {
  std::shared_lock lock(mutex_);
  std::vector<Record> out;
  size_t r = from;
  for (; r < rows_.size() && out.size() < limit; ++r)
    if (!deleted_.test(r)) out.push_back(row_record(static_cast<uint32_t>(r)));
  if (next) *next = r;
  return out;
}

Bitset Collection::filter(std::string_view expr, const TemplateParams& params) const {
  std::shared_lock lock(mutex_);
  return filter_locked(expr, params);
}

std::vector<CollectionHit> Collection::search_vector(std::span<const float> query, size_t k,
                                                     std::string_view expr, const TemplateParams& params,
                                                     uint32_t ef) const {
  if (query.size() != schema_.vector.dim)
    fail(ErrorCode::invalid_argument, "query vector has dimension " + std::to_string(query.size()) +
                                          ", the collection expects " + std::to_string(schema_.vector.dim));
  if (k == 0 || k > kMaxSearchK)
    fail(ErrorCode::invalid_argument, "k must be in [1, " + std::to_string(kMaxSearchK) + "]");
  std::shared_lock lock(mutex_);
  auto allowed = allowed_locked(expr, params);
  index::VectorSearchParams p;
  p.k = k;
  p.ef = ef;
  // Each segment's index with the query's k (and its slice of the allowed rows), then
  // the best k of them all, ties by row.
  std::vector<index::VectorHit> hits;
  for (const auto& seg : segments_) {
    if (seg.rows() == 0) continue;
    std::optional<Bitset> part;
    if (allowed) part = segments_.size() == 1 ? std::move(*allowed) : allowed->slice(seg.base, seg.rows());
    for (const auto& h : seg.vectors->search(query.data(), p, part ? &*part : nullptr))
      hits.push_back({h.row + seg.base, h.score});
  }
  const size_t keep = std::min(k, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(keep), hits.end(),
                    [](const index::VectorHit& a, const index::VectorHit& b) {
                      return a.score > b.score || (a.score == b.score && a.row < b.row);
                    });
  hits.resize(keep);
  std::vector<CollectionHit> out;
  out.reserve(hits.size());
  for (const auto& h : hits) out.push_back({h.row, std::string(rows_.id(h.row)), h.score});
  return out;
}

std::vector<index::LexicalSegment> Collection::lexical_segments(const Bitset* allowed) const {
  std::vector<index::LexicalSegment> out;
  for (const auto& seg : segments_)
    if (seg.rows() > 0) out.push_back({&seg.lexical, {&deleted_, seg.hidden_docs, seg.hidden_len}, allowed, seg.base});
  return out;
}

std::vector<CollectionHit> Collection::search_text(std::string_view query, size_t k, std::string_view expr,
                                                   const TemplateParams& params, std::string_view statistics) const {
  if (k == 0 || k > kMaxSearchK)
    fail(ErrorCode::invalid_argument, "k must be in [1, " + std::to_string(kMaxSearchK) + "]");
  std::shared_lock lock(mutex_);
  auto allowed = allowed_locked(expr, params);
  auto segs = lexical_segments(allowed ? &*allowed : nullptr);
  std::optional<Bitset> outside;
  restrict_statistics_locked(segs, statistics, params, outside);
  const auto terms = segments_.front().lexical.analyzer().terms(query);
  std::vector<CollectionHit> out;
  for (const auto& h : index::search_segments(segs, terms, k, index::TopKAlgorithm::maxscore)) {
    const uint32_t row = segs[h.segment].bits_base + h.doc;
    out.push_back({row, std::string(rows_.id(row)), h.score});
  }
  return out;
}

double Collection::query_weight(std::string_view text, std::string_view statistics, const TemplateParams& params) const {
  std::shared_lock lock(mutex_);
  auto segs = lexical_segments(nullptr);
  std::optional<Bitset> outside;
  restrict_statistics_locked(segs, statistics, params, outside);
  return index::query_weight_segments(segs, segments_.front().lexical.analyzer().terms(text));
}

void Collection::restrict_statistics_locked(std::vector<index::LexicalSegment>& segs, std::string_view statistics,
                                            const TemplateParams& params, std::optional<Bitset>& outside) const {
  // The statistics' population: the rows outside it count as hidden, as deleted rows
  // do (LiveDocs), so N, the total length and every document frequency are its own.
  if (statistics.find_first_not_of(" \t\r\n") == std::string_view::npos) return;
  const Bitset population = filter_locked(statistics, params);  // live rows only
  outside = population;
  outside->flip();
  size_t s = 0;
  std::vector<uint64_t> kept_len(segs.size(), 0);
  std::vector<uint32_t> kept_docs(segs.size(), 0);
  population.for_each([&](size_t r) {
    while (s + 1 < segs.size() && r >= segs[s].bits_base + segs[s].index->size()) ++s;
    const auto doc = static_cast<index::DocId>(r - segs[s].bits_base);
    if (r < segs[s].bits_base || doc >= segs[s].index->size()) return;
    ++kept_docs[s];
    kept_len[s] += segs[s].index->doc_len(doc);
  });
  for (size_t i = 0; i < segs.size(); ++i)
    segs[i].live = {&*outside, segs[i].index->size() - kept_docs[i], segs[i].index->total_len() - kept_len[i]};
}

json Collection::describe() const {
  std::shared_lock lock(mutex_);
  return {{"schema", schema_.to_json()},
          {"rows", rows_.size()},
          {"live", live_.size()},
          {"deleted", deleted_.count()},
          {"persistent", persistent()},
          {"last_lsn", last_lsn_.load()},
          {"log_bytes", wal_bytes_.load()},
          {"segments", segments_.size() - (segments_.back().rows() == 0)},
          {"vector_index_bytes", [&] {
             size_t bytes = 0;
             for (const auto& seg : segments_) bytes += seg.vectors->memory_bytes();
             return bytes;
           }()},
          {"vector_index_mapped_bytes", [&] {
             size_t bytes = 0;
             for (const auto& seg : segments_) bytes += seg.vectors->mapped_bytes();
             return bytes;
           }()},
          {"vector_rows_unlinked", segments_.back().vectors->pending()},
          {"vector_rows_linked_by_writers", rows_linked_by_writers_.load(std::memory_order_relaxed)}};
}

// ---------------------------------------------------------------- repair

std::vector<LogRepair> repair_logs(const fs::path& dir, io::FileSystem& fsys) {
  std::vector<std::pair<uint64_t, fs::path>> wals;
  for (const auto& e : fs::directory_iterator(dir))
    if (auto n = numbered(e.path(), "wal-", ".log")) wals.emplace_back(*n, e.path());
  std::sort(wals.begin(), wals.end());
  std::vector<LogRepair> out;
  bool cut = false;  // once a log is cut, every later one follows the damage
  for (const auto& [first, file] : wals) {
    LogRepair r;
    r.file = file;
    if (cut) {
      r.moved_to = file.string() + ".damaged";
      r.whole_file = true;
      r.bytes_removed = fs::file_size(file);
      fsys.rename(file, r.moved_to);
      out.push_back(r);
      continue;
    }
    auto st = scan_wal(file);
    if (!st.corrupt) continue;
    r.offset = st.bytes;
    r.records_kept = st.records;
    r.bytes_removed = st.file_bytes - st.bytes;
    // Keep the damaged bytes beside the log (for whoever wants to look), then cut.
    r.moved_to = file.string() + ".damaged-at-" + std::to_string(st.bytes);
    {
      std::ifstream in(file, std::ios::binary);
      in.seekg(static_cast<std::streamoff>(st.bytes));
      const std::string damaged((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto keep = fsys.open_writable(r.moved_to, io::FileSystem::OpenMode::truncate);
      keep->append(damaged.data(), damaged.size());
      keep->sync();
    }
    fsys.truncate(file, st.bytes);
    fsys.sync_path(file, false);
    cut = true;
    out.push_back(r);
  }
  if (!out.empty()) fsys.sync_path(dir, true);
  return out;
}

// ---------------------------------------------------------------- Catalog

Catalog::Catalog(fs::path root, CollectionOptions opts) : root_(std::move(root)), opts_(std::move(opts)) {
  opts_.committed_elsewhere = [this](TxnId t) { return committed_here(t); };
  const fs::path txn_file = root_ / "TRANSACTIONS";
  if (fs::exists(txn_file)) {
    auto st = replay_wal(
        txn_file,
        [&](uint64_t lsn, WalOp op, const std::string& payload) {
          if (op == WalOp::txn_commit)
            if (auto t = parse_txn_hex(payload)) committed_.insert(*t);
          txn_lsn_ = lsn;
        },
        /*truncate_torn_tail=*/!opts_.read_only, io::or_posix(opts_.file_system));
    (void)st;
  }
  if (opts_.read_only) return;  // a reader never creates anything
  io::create_directories_durably(io::or_posix(opts_.file_system), root_);
  recover_rebuilds();
}

// ---------------------------------------------------------------- rebuilds
//
// A rebuild of collection X moves through hidden folders (never collection names:
// those cannot start with '.'):
//   .rebuild-X   being filled; after a crash, garbage
//   .new-X       complete, holding the file REPLACES: the swap is due
//   X            after the swap; REPLACES is removed last
//   .new-X       without REPLACES: the old X after an exchange, garbage
//   .old-X       the old X after the first of two renames (no RENAME_EXCHANGE), garbage
// so the folder named X always holds a whole collection, old or new, and an opening
// catalog can tell every interrupted state apart.
namespace {
constexpr std::string_view kRebuildPrefix = ".rebuild-";
constexpr std::string_view kReadyPrefix = ".new-";
constexpr std::string_view kOldPrefix = ".old-";
constexpr const char* kSwapMarker = "REPLACES";
}  // namespace

fs::path Catalog::folder_locked(const std::string& name) const {
  const fs::path live = root_ / name;
  if (!opts_.read_only || fs::exists(live / "schema.json")) return live;
  const fs::path ready = root_ / (std::string(kReadyPrefix) + name);
  return fs::exists(ready / kSwapMarker) ? ready : live;
}

void Catalog::recover_rebuilds(const std::string& only) {
  auto& fsys = io::or_posix(opts_.file_system);
  std::error_code ec;
  std::vector<std::pair<std::string_view, std::string>> found;  // (prefix, collection name)
  for (const auto& e : fs::directory_iterator(root_, ec)) {
    const std::string entry = e.path().filename().string();
    for (auto prefix : {kRebuildPrefix, kReadyPrefix, kOldPrefix})
      if (entry.starts_with(prefix) && (only.empty() || entry.substr(prefix.size()) == only))
        found.emplace_back(prefix, entry.substr(prefix.size()));
  }
  // Complete replacements first (they may need the live name), then the garbage.
  std::stable_partition(found.begin(), found.end(), [](const auto& f) { return f.first == kReadyPrefix; });
  for (const auto& [prefix, name] : found) {
    const fs::path dir = root_ / (std::string(prefix) + name), live = root_ / name;
    if (prefix == kReadyPrefix && fs::exists(dir / kSwapMarker)) {
      spdlog::warn("{}: finishing the swap of a rebuilt collection a crash interrupted", live.string());
      swap_in_rebuilt(name);
      // What the exchange left at `dir` (the old collection) goes with the garbage.
      if (fs::exists(dir)) fsys.remove_all(dir);
      const fs::path old = root_ / (std::string(kOldPrefix) + name);
      if (fs::exists(old)) fsys.remove_all(old);
    } else if (fs::exists(dir)) {
      fsys.remove_all(dir);
    }
    fsys.sync_path(root_, true);
    // A swap done but its marker not yet removed.
    if (fs::exists(live / kSwapMarker)) {
      fsys.remove(live / kSwapMarker);
      fsys.sync_path(live, true);
    }
  }
}

fs::path Catalog::swap_in_rebuilt(const std::string& name) {
  auto& fsys = io::or_posix(opts_.file_system);
  const fs::path ready = root_ / (std::string(kReadyPrefix) + name), live = root_ / name;
  const fs::path old = root_ / (std::string(kOldPrefix) + name);
  fs::path garbage;
  if (!fs::exists(live / "schema.json")) {
    fsys.rename(ready, live);  // a crash came between the two renames: the old one is at .old-
  } else if (fsys.exchange(ready, live)) {
    garbage = ready;
  } else {
    if (fs::exists(old)) fsys.remove_all(old);  // an earlier swap's leftover: rename needs the name
    fsys.rename(live, old);
    fsys.rename(ready, live);
    garbage = old;
  }
  fsys.sync_path(root_, true);
  fsys.remove(live / kSwapMarker);
  fsys.sync_path(live, true);
  return garbage;
}

std::unique_ptr<Collection> Catalog::begin_rebuild(const CollectionSchema& schema) {
  if (opts_.read_only) fail(ErrorCode::conflict, "the store is open read-only; cannot rebuild '" + schema.name + "'");
  schema.validate();
  {
    std::lock_guard lock(mu_);
    if (!exists_locked(schema.name)) fail(ErrorCode::not_found, "no collection named '" + schema.name + "'");
  }
  {
    std::lock_guard lock(mu_);
    require_available_locked(schema.name);
  }
  if (fs::exists(root_ / (std::string(kReadyPrefix) + schema.name) / kSwapMarker))
    fail(ErrorCode::unavailable, "a rebuilt '" + schema.name + "' is waiting to be swapped in: open the store again "
                                 "to finish it");
  // A complete rebuild waiting for its swap exists only after a failure that made
  // the name unavailable (checked above) or before this catalog opened (finished
  // then); garbage of an earlier failed rebuild of this name goes first.
  recover_rebuilds(schema.name);
  const fs::path dir = root_ / (std::string(kRebuildPrefix) + schema.name);
  CollectionOptions o = opts_;
  o.merge_mode = CollectionOptions::Merges::in_checkpoint;  // its folder is renamed at the swap: no thread may write in it
  // The rows reach the disk in the checkpoint finish_rebuild writes (synced); a
  // crash before it discards the folder whole, so its log need not be synced.
  o.sync = WalSync::none;
  o.checkpoint_wal_bytes = std::numeric_limits<uint64_t>::max();
  o.committed_elsewhere = nullptr;
  return Collection::create(dir, schema, o);
}

void Catalog::abort_rebuild(std::unique_ptr<Collection> built) {
  if (!built) return;
  const std::string name = built->schema().name;
  built.reset();
  auto& fsys = io::or_posix(opts_.file_system);
  fsys.remove_all(root_ / (std::string(kRebuildPrefix) + name));
  fsys.sync_path(root_, true);
}

void Catalog::finish_rebuild(std::unique_ptr<Collection> built, const ExclusiveFn& exclusive) {
  const std::string name = built->schema().name;
  auto& fsys = io::or_posix(opts_.file_system);
  const fs::path building = root_ / (std::string(kRebuildPrefix) + name);
  const fs::path ready = root_ / (std::string(kReadyPrefix) + name);
  const fs::path live = root_ / name;
  try {
    // 1. Every row in a synced segment; the folder marked complete, then named so.
    built->checkpoint();
    built.reset();
    fsys.open_writable(building / kSwapMarker, io::FileSystem::OpenMode::truncate)->sync();
    fsys.sync_path(building, true);
    fsys.rename(building, ready);
    fsys.sync_path(root_, true);
  } catch (...) {
    // Not done: the old collection stays, and nothing may swap this one in later
    // (the old one may take writes from now on).
    built.reset();
    try {
      for (const auto& dir : {building, ready})
        if (fs::exists(dir)) fsys.remove_all(dir);
      fsys.sync_path(root_, true);
    } catch (const std::exception& e) {
      // A complete rebuild left behind would be swapped in at the next open, over
      // whatever the old collection took meanwhile: no more writes until then.
      if (fs::exists(ready / kSwapMarker)) {
        std::lock_guard lock(mu_);
        unavailable_[name] = std::string("its unfinished rebuild could not be removed: ") + e.what();
      }
    }
    throw;
  }
  // 2. The swap. From here the new collection is what the store holds: a crash
  // finishes the swap at the next open (recover_rebuilds), and so does an error here,
  // at once. 3. In memory, the new collection opens while the old one still serves,
  // then is swapped in with readers held back.
  fs::path garbage;  // the old collection's folder once swapped
  std::unique_ptr<Collection> fresh;
  std::exception_ptr failure;
  try {
    garbage = swap_in_rebuilt(name);
    fresh = Collection::open(live, opts_);
  } catch (const std::exception& first) {
    spdlog::warn("{}: the swap of the rebuilt collection failed ({}); finishing it again", live.string(), first.what());
    try {
      recover_rebuilds(name);
      garbage.clear();  // recover_rebuilds removed it
      fresh = Collection::open(live, opts_);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  std::unique_ptr<Collection> replaced;
  auto swap = [&]() -> bool {
    std::lock_guard lock(mu_);
    if (auto it = open_.find(name); it != open_.end()) {
      replaced = std::move(it->second);
      open_.erase(it);
    }
    if (!fresh) {
      // What the disk holds is unknown: the old object must take no more writes (they
      // could be lost at the next open), and nothing may open the folder until then.
      std::string why = "unknown error";
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        why = e.what();
      } catch (...) {
      }
      unavailable_[name] = why;
      return false;
    }
    open_[name] = std::move(fresh);
    return true;
  };
  if (exclusive) exclusive(swap);
  else swap();
  replaced.reset();
  if (failure) std::rethrow_exception(failure);
  if (!garbage.empty()) {
    try {
      fsys.remove_all(garbage);
      fsys.sync_path(root_, true);
    } catch (const Error& e) {
      // The swap is done; the next open removes what is left.
      spdlog::warn("{}: the replaced collection's folder was not removed ({})", garbage.string(), e.what());
    }
  }
}

void Catalog::require_available_locked(const std::string& name) const {
  if (auto it = unavailable_.find(name); it != unavailable_.end())
    fail(ErrorCode::unavailable, "collection '" + name + "' is unavailable until the store is opened again: a rebuild "
                                 "could not be finished (" + it->second + "); opening finishes it");
}

bool Catalog::committed_here(TxnId txn) const {
  std::lock_guard lock(txn_mu_);
  return committed_.count(txn) > 0;
}

size_t Catalog::commit(TxnId txn, const std::vector<Collection*>& collections, const ExclusiveFn& exclusive) {
  std::vector<Collection*> staged;
  for (auto* c : collections)
    if (c && c->has_transaction(txn) && std::find(staged.begin(), staged.end(), c) == staged.end())
      staged.push_back(c);
  if (staged.size() > 1) {
    // The commit point of a transaction over several collections: once this record is
    // durable, every collection applies the transaction, even if a crash comes before
    // its own commit record (Collection::open consults committed_elsewhere).
    std::lock_guard lock(txn_mu_);
    if (!txn_log_)
      txn_log_ = std::make_unique<WalWriter>(root_ / "TRANSACTIONS", opts_.sync, io::or_posix(opts_.file_system));
    const bool created = txn_lsn_ == 0;
    txn_log_->append(txn_lsn_ + 1, WalOp::txn_commit, txn_hex(txn));
    ++txn_lsn_;
    committed_.insert(txn);
    if (created) io::or_posix(opts_.file_system).sync_path(root_, true);
  }
  // Every commit record is durable before any row becomes visible: the disk work is
  // done before `exclusive` (where the caller holds its searches back), which only
  // publishes.
  for (auto* c : staged) c->log_commit(txn);
  size_t deleted = 0;
  const auto publish = [&] {
    for (auto* c : staged) deleted += c->publish_commit(txn);
    return true;
  };
  if (exclusive) {
    exclusive(publish);
  } else {
    publish();
  }
  return deleted;
}

Collection& Catalog::create(const CollectionSchema& schema) {
  if (opts_.read_only) fail(ErrorCode::conflict, "the store is open read-only; cannot create '" + schema.name + "'");
  schema.validate();
  std::lock_guard lock(mu_);
  require_available_locked(schema.name);
  if (exists_locked(schema.name)) fail(ErrorCode::conflict, "collection '" + schema.name + "' already exists");
  auto c = Collection::create(root_ / schema.name, schema, opts_);
  // The new folder's entry in the catalog folder must survive a crash too.
  io::or_posix(opts_.file_system).sync_path(root_, true);
  auto& ref = *c;
  open_[schema.name] = std::move(c);
  return ref;
}

bool Catalog::exists_locked(const std::string& name) const {
  if (open_.count(name)) return true;
  return valid_collection_name(name) && fs::exists(folder_locked(name) / "schema.json");
}

bool Catalog::exists(const std::string& name) const {
  std::lock_guard lock(mu_);
  return exists_locked(name);
}

Collection& Catalog::get(const std::string& name) {
  std::lock_guard lock(mu_);
  require_available_locked(name);
  if (auto it = open_.find(name); it != open_.end()) return *it->second;
  if (!exists_locked(name)) fail(ErrorCode::not_found, "no collection named '" + name + "'");
  auto c = Collection::open(folder_locked(name), opts_);
  auto& ref = *c;
  open_[name] = std::move(c);
  return ref;
}

Collection* Catalog::find(const std::string& name) {
  std::lock_guard lock(mu_);
  require_available_locked(name);
  if (auto it = open_.find(name); it != open_.end()) return it->second.get();
  if (!exists_locked(name)) return nullptr;
  auto c = Collection::open(folder_locked(name), opts_);
  auto* ref = c.get();
  open_[name] = std::move(c);
  return ref;
}

void Catalog::drop(const std::string& name) {
  if (opts_.read_only) fail(ErrorCode::conflict, "the store is open read-only; cannot drop '" + name + "'");
  std::lock_guard lock(mu_);
  if (!exists_locked(name)) fail(ErrorCode::not_found, "no collection named '" + name + "'");
  open_.erase(name);
  // Remove the schema first: a crash mid-drop leaves a folder that is not a collection.
  auto& fsys = io::or_posix(opts_.file_system);
  fsys.remove(root_ / name / "schema.json");
  fsys.sync_path(root_ / name, true);
  fsys.remove_all(root_ / name);
  fsys.sync_path(root_, true);
}

std::vector<std::string> Catalog::list() const {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return out;
  std::lock_guard lock(mu_);
  for (const auto& e : fs::directory_iterator(root_))
    if (e.is_directory() && exists_locked(e.path().filename().string())) out.push_back(e.path().filename().string());
  // An open collection whose folder is being swapped (two renames) is still there.
  for (const auto& [name, c] : open_)
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

json Catalog::describe(const std::string& name) { return get(name).describe(); }

}  // namespace eagle::store
