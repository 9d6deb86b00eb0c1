#include "eagle/store/collection.h"
#include "eagle/store/checked_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <fstream>
#include <mutex>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "eagle/core/atomic_file.h"
#include "eagle/core/binary_io.h"
#include "eagle/core/error.h"
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

constexpr char kSegMagic[8] = {'E', 'G', 'L', 'S', 'E', 'G', '1', '\0'};

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

std::string numbered_name(std::string_view prefix, uint64_t n, std::string_view ext) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%020llu", static_cast<unsigned long long>(n));
  return std::string(prefix) + buf + std::string(ext);
}

// Adapts a stored row to the filter evaluator's row interface.
class RowAdapter : public filter::RowView {
 public:
  void bind(const std::string* id, const std::vector<Value>* values) {
    id_ = id;
    values_ = values;
  }
  const Value& field(size_t i) const override { return (*values_)[i]; }
  const std::string& id() const override { return *id_; }

 private:
  const std::string* id_ = nullptr;
  const std::vector<Value>* values_ = nullptr;
};

}  // namespace

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
    : schema_(std::move(schema)), opts_(opts), dir_(std::move(dir)), lexical_(opts.bm25, opts.analyzer) {
  schema_.validate();
  reset_indexes();
}

Collection::~Collection() = default;

void Collection::reset_indexes() {
  rows_.clear();
  deleted_ = Bitset();
  live_.clear();
  lexical_ = index::Bm25Index(opts_.bm25, opts_.analyzer);
  vectors_ = index::make_vector_index(schema_.vector);
  scalar_.clear();
  for (const auto& f : schema_.fields)
    scalar_.push_back(f.indexed ? std::make_unique<filter::ScalarIndex>(f.type) : nullptr);
}

std::unique_ptr<Collection> Collection::in_memory(CollectionSchema schema, CollectionOptions opts) {
  return std::unique_ptr<Collection>(new Collection(std::move(schema), opts, {}));
}

std::unique_ptr<Collection> Collection::create(const fs::path& dir, CollectionSchema schema,
                                               CollectionOptions opts) {
  schema.validate();
  if (fs::exists(dir / "schema.json"))
    fail(ErrorCode::conflict, "a collection already exists at " + dir.string());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(ErrorCode::unavailable, "cannot create " + dir.string() + ": " + ec.message());
  write_file_atomic(dir / "schema.json", [&](std::ostream& out) { out << with_checksum(schema.to_json()).dump(2); });
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
  json sj;
  try {
    sj = json::parse(read_file(dir / "schema.json"));
  } catch (const json::exception& e) {
    fail(ErrorCode::data_loss, (dir / "schema.json").string() + ": not valid JSON (" + e.what() + ")");
  }
  verify_json_checksum(sj, dir / "schema.json");
  sj.erase("checksum");
  const auto schema = CollectionSchema::from_json(sj);
  // A reader races the writer's checkpoints: the manifest it read may name a segment
  // (and logs) the writer deletes a moment later. The writer always publishes the
  // new manifest before deleting anything, so a reader that finds the manifest
  // unchanged after loading has a consistent view; otherwise it starts again.
  for (int attempt = 0;; ++attempt) {
    const std::string manifest_before = manifest_text(dir);
    std::unique_ptr<Collection> c(new Collection(schema, opts, dir));
    try {
      c->load_from_disk(manifest_before);
    } catch (const Error&) {
      if (!opts.read_only || attempt >= 20 || manifest_text(dir) == manifest_before) throw;
      continue;  // a checkpoint replaced files under us
    }
    if (opts.read_only && manifest_text(dir) != manifest_before && attempt < 20) continue;
    return c;
  }
}

void Collection::load_from_disk(const std::string& manifest) {
  std::unique_lock lock(mutex_);
  const fs::path& dir = dir_;
  const bool ro = opts_.read_only;
  // 1. The segment named by the manifest, if any.
  std::string segment;
  if (!manifest.empty()) {
    try {
      auto m = json::parse(manifest);
      verify_json_checksum(m, dir / "MANIFEST");
      segment = m.at("segment").get<std::string>();
      // Format 2 segments carry block checksums, verified before a byte is used.
      load_segment(dir / segment, m.value("format", 1) >= 2);
      last_lsn_ = m.at("last_lsn").get<uint64_t>();
    } catch (const json::exception& e) {
      fail(ErrorCode::data_loss, (dir / "MANIFEST").string() + ": " + e.what());
    }
  }
  // 2. A writer removes leftovers of an interrupted checkpoint: temporary files and
  //    segments the manifest does not name. A reader leaves every file alone.
  std::vector<std::pair<uint64_t, fs::path>> wals;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") {
      if (!ro) fs::remove(e.path());
    } else if (numbered(e.path(), "seg-", ".eagle") && name != segment) {
      if (!ro) fs::remove(e.path());
    } else if (auto n = numbered(e.path(), "wal-", ".log")) {
      wals.emplace_back(*n, e.path());
    }
  }
  std::sort(wals.begin(), wals.end());
  // 3. Replay every log record after the segment. A writer cuts a torn tail (a write
  //    never acknowledged); a reader stops before it, since the frame may be one the
  //    writer is appending right now.
  const uint64_t segment_lsn = last_lsn_;
  for (const auto& wal : wals) {
    const fs::path& file = wal.second;  // named: the replay callback captures it
    auto st = replay_wal(
        file,
        [&](uint64_t lsn, WalOp op, const std::string& payload) {
          if (lsn <= segment_lsn) return;
          try {
            replay(lsn, op, payload);
          } catch (const std::exception& e) {
            // Intact but not applicable (written by an older version that logged
            // before validating): never applied, kept aside, said out loud.
            quarantine(file, lsn, op, payload, e.what());
            last_lsn_ = lsn;
          }
        },
        /*truncate_torn_tail=*/!ro);
    if (!ro) wal_bytes_ = st.bytes;
    if (st.truncated_tail && !ro)
      spdlog::warn("{}: cut a torn tail of {} bytes (a write a crash interrupted before it was acknowledged) after "
                   "{} intact records", file.string(), st.torn_bytes, st.records);
  }
  if (ro) return;
  // 4. Append to the newest log (or a new one).
  fs::path wal_file = wals.empty() ? dir / numbered_name("wal-", last_lsn_ + 1, ".log") : wals.back().second;
  wal_ = std::make_unique<WalWriter>(wal_file, opts_.sync);
  wal_bytes_ = fs::exists(wal_file) ? fs::file_size(wal_file) : 0;
  fsync_path(dir, true);
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
    if (!allow_existing && live_.count(r.id)) fail(ErrorCode::conflict, "id '" + r.id + "' already exists");
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
std::string records_payload(const std::vector<Record>& records, const CollectionSchema& schema) {
  json arr = json::array();
  for (const auto& r : records) arr.push_back(record_to_json(r, schema, true));
  return arr.dump();
}
}  // namespace

void Collection::insert(std::vector<Record> records) {
  require_writable();
  std::lock_guard w(write_mu_);
  {
    std::unique_lock lock(mutex_);
    validate_batch(records, false);
    if (records.empty()) return;
    log(WalOp::insert, wal_ ? records_payload(records, schema_) : std::string());
    apply_insert(records);
  }
  maybe_checkpoint();
}

void Collection::upsert(std::vector<Record> records) {
  require_writable();
  std::lock_guard w(write_mu_);
  {
    std::unique_lock lock(mutex_);
    validate_batch(records, true);
    if (records.empty()) return;
    log(WalOp::upsert, wal_ ? records_payload(records, schema_) : std::string());
    apply_insert(records);
  }
  maybe_checkpoint();
}

size_t Collection::replace(const std::vector<std::string>& delete_ids, std::vector<Record> records,
                           bool auto_checkpoint) {
  require_writable();
  if (delete_ids.size() > kMaxBatch)
    fail(ErrorCode::invalid_argument, "a delete may name at most " + std::to_string(kMaxBatch) + " ids");
  std::lock_guard w(write_mu_);
  size_t n = 0;
  {
    std::unique_lock lock(mutex_);
    validate_batch(records, true);
    std::vector<std::string> present;
    for (const auto& id : delete_ids)
      if (live_.count(id)) present.push_back(id);
    if (present.empty() && records.empty()) return 0;
    if (wal_) {
      json payload = {{"delete", present}, {"upsert", json::parse(records_payload(records, schema_))}};
      log(WalOp::replace, payload.dump());
    } else {
      log(WalOp::replace, std::string());
    }
    n = apply_remove(present);
    apply_insert(records);
  }
  if (auto_checkpoint) maybe_checkpoint();
  return n;
}

size_t Collection::remove(const std::vector<std::string>& ids, bool auto_checkpoint) {
  require_writable();
  if (ids.size() > kMaxBatch)
    fail(ErrorCode::invalid_argument, "a delete may name at most " + std::to_string(kMaxBatch) + " ids");
  std::lock_guard w(write_mu_);
  size_t n = 0;
  {
    std::unique_lock lock(mutex_);
    std::vector<std::string> present;
    for (const auto& id : ids)
      if (live_.count(id)) present.push_back(id);
    if (present.empty()) return 0;
    log(WalOp::delete_ids, json(present).dump());
    n = apply_remove(present);
  }
  if (auto_checkpoint) maybe_checkpoint();
  return n;
}

size_t Collection::remove_where(std::string_view expr, const TemplateParams& params) {
  require_writable();
  std::lock_guard w(write_mu_);
  size_t n = 0;
  {
    std::unique_lock lock(mutex_);
    // The filter is resolved to ids now, so replaying the log deletes exactly these
    // rows even if later writes would match the same expression.
    Bitset rows = filter_locked(expr, params);
    std::vector<std::string> ids;
    rows.for_each([&](size_t r) { ids.push_back(rows_[r].id); });
    if (ids.empty()) return 0;
    log(WalOp::delete_ids, json(ids).dump());
    n = apply_remove(ids);
  }
  maybe_checkpoint();
  return n;
}

void Collection::apply_insert(std::vector<Record>& records) {
  for (auto& r : records) {
    if (auto it = live_.find(r.id); it != live_.end()) {
      deleted_.set(it->second);  // upsert: the old row becomes a tombstone
      live_.erase(it);
    }
    const uint32_t row = static_cast<uint32_t>(rows_.size());
    // The lexical index sees the text; the vector index the vector; the scalar
    // indexes their field. Row ids are dense and shared by all three.
    lexical_.add(r.text);
    vectors_->add(row, r.vector.data());
    for (size_t i = 0; i < scalar_.size(); ++i)
      if (scalar_[i]) scalar_[i]->add(row, r.values[i]);
    rows_.push_back({std::move(r.id), std::move(r.text), std::move(r.values)});
    deleted_.resize(rows_.size());
    live_.emplace(rows_.back().id, row);
  }
}

size_t Collection::apply_remove(const std::vector<std::string>& ids) {
  size_t n = 0;
  for (const auto& id : ids) {
    auto it = live_.find(id);
    if (it == live_.end()) continue;
    deleted_.set(it->second);
    live_.erase(it);
    ++n;
  }
  return n;
}

void Collection::replay(uint64_t lsn, WalOp op, const std::string& payload) {
  // Decode the whole record before touching any row: a record that cannot be applied
  // is applied not at all (the caller quarantines it).
  json j = json::parse(payload);
  std::vector<std::string> removes;
  std::vector<Record> records;
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
  json entry = {{"log", log.filename().string()}, {"lsn", lsn}, {"op", static_cast<int>(op)}, {"error", why},
                {"payload", payload}};
  std::ofstream out(file, std::ios::app | std::ios::binary);
  out << entry.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  out.flush();
  if (!out) fail(ErrorCode::unavailable, "cannot write " + file.string());
  out.close();
  fsync_path(file, false);
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
  std::string seg_name;
  {
    // 1. The segment: every row up to last_lsn_, written whole before it is named.
    //    Writers wait on write_mu_ (held by our caller), so a shared lock gives a
    //    stable state and searches go on while the file is written.
    std::shared_lock lock(mutex_);
    seg_name = numbered_name("seg-", last_lsn_, ".eagle");
    write_segment(dir_ / seg_name);
  }
  std::unique_lock lock(mutex_);
  // 2. The manifest switches to it atomically; from here the old files are garbage.
  write_file_atomic(dir_ / "MANIFEST", [&](std::ostream& out) {
    out << with_checksum({{"format", 2}, {"segment", seg_name}, {"last_lsn", last_lsn_}}).dump();
  });
  // 3. A fresh log for records after the segment; then drop what the segment covers.
  const fs::path new_wal = dir_ / numbered_name("wal-", last_lsn_ + 1, ".log");
  wal_ = std::make_unique<WalWriter>(new_wal, opts_.sync);
  wal_bytes_ = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path() == new_wal) continue;
    if (numbered(e.path(), "wal-", ".log") ||
        (numbered(e.path(), "seg-", ".eagle") && e.path().filename() != seg_name))
      fs::remove(e.path());
  }
  fsync_path(dir_, true);
}

void Collection::write_segment(const fs::path& file) const {
  write_checked_file(file, [&](std::ostream& out) {
    out.write(kSegMagic, sizeof(kSegMagic));
    io::write_pod<uint64_t>(out, last_lsn_);
    io::write_pod<uint64_t>(out, rows_.size());
    for (uint32_t r = 0; r < rows_.size(); ++r) {
      const auto& row = rows_[r];
      io::write_str(out, row.id);
      io::write_str(out, row.text);
      io::write_pod<uint8_t>(out, deleted_.test(r) ? 1 : 0);
      json vals = json::array();
      for (const auto& v : row.values) vals.push_back(value_to_json(v));
      io::write_str(out, vals.dump());
    }
    lexical_.save(out);
    vectors_->save(out);
  });
}

void Collection::load_segment(const fs::path& file, bool checked) {
  if (!fs::exists(file)) fail(ErrorCode::data_loss, "segment named by MANIFEST is missing: " + file.string());
  if (checked) verify_checked_file(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::unavailable, "cannot open " + file.string());
  try {
    char magic[sizeof(kSegMagic)];
    if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kSegMagic, sizeof(magic)) != 0)
      fail(ErrorCode::invalid_argument, "bad segment magic");
    io::read_pod<uint64_t>(in, "segment lsn");
    const auto n = io::read_pod<uint64_t>(in, "row count");
    // Each row takes at least 25 bytes (id and text lengths, flag, values length): a
    // count the file cannot hold is damage, found before anything is allocated.
    std::error_code size_ec;
    const uint64_t file_bytes = fs::file_size(file, size_ec);
    if (n > io::kMaxElements || (!size_ec && n > file_bytes / 25))
      fail(ErrorCode::invalid_argument, "corrupt row count " + std::to_string(n));
    reset_indexes();
    rows_.resize(n);
    deleted_.resize(n);
    for (uint32_t r = 0; r < n; ++r) {
      auto& row = rows_[r];
      row.id = io::read_str(in, "row id");
      row.text = io::read_str(in, "row text");
      if (io::read_pod<uint8_t>(in, "row flag")) deleted_.set(r);
      auto vals = json::parse(io::read_str(in, "row values"));
      if (!vals.is_array() || vals.size() != schema_.fields.size())
        fail(ErrorCode::invalid_argument, "row values do not match the schema");
      row.values.reserve(vals.size());
      for (size_t i = 0; i < vals.size(); ++i)
        row.values.push_back(value_from_json(vals[i], schema_.fields[i].type, schema_.fields[i].name));
      for (size_t i = 0; i < scalar_.size(); ++i)
        if (scalar_[i]) scalar_[i]->add(r, row.values[i]);
      if (!deleted_.test(r)) live_[row.id] = r;
    }
    lexical_ = index::Bm25Index::load(in);
    vectors_ = index::load_vector_index(in);
    if (lexical_.size() != n || vectors_->size() != n)
      fail(ErrorCode::invalid_argument, "segment indexes disagree with the row count");
  } catch (const Error& e) {
    fail(e.code(), file.string() + ": " + e.what());
  } catch (const json::exception& e) {
    fail(ErrorCode::invalid_argument, file.string() + ": " + e.what());
  }
}

namespace {
// What a filter compiles against: the collection's rows and scalar indexes.
class CollectionTarget : public filter::FilterTarget {
 public:
  template <typename Rows>
  CollectionTarget(size_t rows, const std::vector<std::unique_ptr<filter::ScalarIndex>>& scalar, const Rows& data)
      : rows_(rows), scalar_(scalar) {
    fetch_ = [&data, this](uint32_t r) { adapter_.bind(&data[r].id, &data[r].values); };
  }
  size_t row_count() const override { return rows_; }
  const filter::ScalarIndex* index(size_t field) const override { return scalar_[field].get(); }
  const filter::RowView& row(uint32_t r) const override {
    fetch_(r);
    return adapter_;
  }

 private:
  size_t rows_;
  const std::vector<std::unique_ptr<filter::ScalarIndex>>& scalar_;
  std::function<void(uint32_t)> fetch_;
  mutable RowAdapter adapter_;
};
}  // namespace

Bitset Collection::filter_locked(std::string_view expr, const TemplateParams& params) const {
  Bitset live(rows_.size(), true);
  live.subtract(deleted_);
  if (expr.find_first_not_of(" \t\r\n") == std::string_view::npos) return live;
  auto parsed = filter::parse(expr, schema_, params);
  CollectionTarget target(rows_.size(), scalar_, rows_);
  // Deleted rows are never read by the row-by-row fallback.
  return filter::compile(parsed, target, live);
}

std::optional<Bitset> Collection::allowed_locked(std::string_view expr, const TemplateParams& params) const {
  const bool no_filter = expr.find_first_not_of(" \t\r\n") == std::string_view::npos;
  if (no_filter && !deleted_.any()) return std::nullopt;
  return filter_locked(expr, params);
}

size_t Collection::count() const {
  std::shared_lock lock(mutex_);
  return live_.size();
}

std::optional<Record> Collection::get(const std::string& id) const {
  std::shared_lock lock(mutex_);
  auto it = live_.find(id);
  if (it == live_.end()) return std::nullopt;
  const auto& row = rows_[it->second];
  return Record{row.id, row.text, {}, row.values};
}

std::optional<Record> Collection::get(const std::string& id, std::string_view expr,
                                      const TemplateParams& params) const {
  if (expr.find_first_not_of(" \t\r\n") == std::string_view::npos) return get(id);
  auto parsed = filter::parse(expr, schema_, params);
  std::shared_lock lock(mutex_);
  auto it = live_.find(id);
  if (it == live_.end()) return std::nullopt;
  const auto& row = rows_[it->second];
  RowAdapter view;
  view.bind(&row.id, &row.values);
  if (!filter::evaluate(parsed, view)) return std::nullopt;
  return Record{row.id, row.text, {}, row.values};
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
    const auto* v = std::get_if<std::string>(&rows_[r].values[*idx]);
    out.emplace_back(rows_[r].id, v ? *v : std::string());
  });
  return out;
}

void Collection::compact() {
  if (!persistent()) return;
  require_writable();
  std::lock_guard w(write_mu_);
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
  std::unique_ptr<Collection> fresh(new Collection(schema_, opts_, {}));
  {
    std::shared_lock read(mutex_);
    std::vector<Record> live;
    live.reserve(live_.size());
    std::vector<float> v(schema_.vector.dim);
    for (uint32_t r = 0; r < rows_.size(); ++r) {
      if (deleted_.test(r)) continue;
      vectors_->stored_vector(r, v.data());
      live.push_back(Record{rows_[r].id, rows_[r].text, v, rows_[r].values});
    }
    fresh->apply_insert(live);
  }
  {
    std::unique_lock lock(mutex_);
    rows_ = std::move(fresh->rows_);
    deleted_ = std::move(fresh->deleted_);
    live_ = std::move(fresh->live_);
    lexical_ = std::move(fresh->lexical_);
    vectors_ = std::move(fresh->vectors_);
    scalar_ = std::move(fresh->scalar_);
  }
  checkpoint_unlocked();
}

std::vector<Record> Collection::records(const std::vector<CollectionHit>& hits) const {
  std::shared_lock lock(mutex_);
  std::vector<Record> out;
  out.reserve(hits.size());
  for (const auto& h : hits) {
    if (h.row >= rows_.size()) fail(ErrorCode::invalid_argument, "row out of range");
    const auto& row = rows_[h.row];
    out.push_back(Record{row.id, row.text, {}, row.values});
  }
  return out;
}

std::vector<Record> Collection::fetch(std::string_view expr, const TemplateParams& params, size_t limit) const {
  if (limit > kMaxSearchK) fail(ErrorCode::invalid_argument, "fetch limit must be at most " + std::to_string(kMaxSearchK));
  std::shared_lock lock(mutex_);
  std::vector<Record> out;
  filter_locked(expr, params).for_each([&](size_t r) {
    if (out.size() < limit) out.push_back(Record{rows_[r].id, rows_[r].text, {}, rows_[r].values});
  });
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
  auto hits = vectors_->search(query.data(), p, allowed ? &*allowed : nullptr);
  std::vector<CollectionHit> out;
  out.reserve(hits.size());
  for (const auto& h : hits) out.push_back({h.row, rows_[h.row].id, h.score});
  return out;
}

std::vector<CollectionHit> Collection::search_text(std::string_view query, size_t k, std::string_view expr,
                                                   const TemplateParams& params) const {
  if (k == 0 || k > kMaxSearchK)
    fail(ErrorCode::invalid_argument, "k must be in [1, " + std::to_string(kMaxSearchK) + "]");
  std::shared_lock lock(mutex_);
  auto allowed = allowed_locked(expr, params);
  auto hits = lexical_.search(query, k, index::TopKAlgorithm::maxscore, allowed ? &*allowed : nullptr);
  std::vector<CollectionHit> out;
  out.reserve(hits.size());
  for (const auto& h : hits) out.push_back({h.doc, rows_[h.doc].id, h.score});
  return out;
}

json Collection::describe() const {
  std::shared_lock lock(mutex_);
  return {{"schema", schema_.to_json()},
          {"rows", rows_.size()},
          {"live", live_.size()},
          {"deleted", deleted_.count()},
          {"persistent", persistent()},
          {"last_lsn", last_lsn_},
          {"log_bytes", wal_bytes_},
          {"vector_index_bytes", vectors_->memory_bytes()}};
}

// ---------------------------------------------------------------- repair

std::vector<LogRepair> repair_logs(const fs::path& dir) {
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
      fs::rename(file, r.moved_to);
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
      std::ofstream keep(r.moved_to, std::ios::binary | std::ios::trunc);
      keep << in.rdbuf();
      keep.flush();
      if (!keep) fail(ErrorCode::unavailable, "cannot write " + r.moved_to.string());
    }
    fsync_path(r.moved_to, false);
    if (::truncate(file.c_str(), static_cast<off_t>(st.bytes)) != 0)
      fail(ErrorCode::unavailable, "cannot truncate " + file.string());
    fsync_path(file, false);
    cut = true;
    out.push_back(r);
  }
  if (!out.empty()) fsync_path(dir, true);
  return out;
}

// ---------------------------------------------------------------- Catalog

Catalog::Catalog(fs::path root, CollectionOptions opts) : root_(std::move(root)), opts_(opts) {
  if (opts_.read_only) return;  // a reader never creates anything
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) fail(ErrorCode::unavailable, "cannot create " + root_.string() + ": " + ec.message());
}

Collection& Catalog::create(const CollectionSchema& schema) {
  if (opts_.read_only) fail(ErrorCode::conflict, "the store is open read-only; cannot create '" + schema.name + "'");
  schema.validate();
  std::lock_guard lock(mu_);
  if (exists_locked(schema.name)) fail(ErrorCode::conflict, "collection '" + schema.name + "' already exists");
  auto c = Collection::create(root_ / schema.name, schema, opts_);
  // The new folder's entry in the catalog folder must survive a crash too.
  fsync_path(root_, true);
  auto& ref = *c;
  open_[schema.name] = std::move(c);
  return ref;
}

bool Catalog::exists_locked(const std::string& name) const {
  if (open_.count(name)) return true;
  return valid_collection_name(name) && fs::exists(root_ / name / "schema.json");
}

bool Catalog::exists(const std::string& name) const {
  std::lock_guard lock(mu_);
  return exists_locked(name);
}

Collection& Catalog::get(const std::string& name) {
  std::lock_guard lock(mu_);
  if (auto it = open_.find(name); it != open_.end()) return *it->second;
  if (!exists_locked(name)) fail(ErrorCode::not_found, "no collection named '" + name + "'");
  auto c = Collection::open(root_ / name, opts_);
  auto& ref = *c;
  open_[name] = std::move(c);
  return ref;
}

Collection* Catalog::find(const std::string& name) {
  std::lock_guard lock(mu_);
  if (auto it = open_.find(name); it != open_.end()) return it->second.get();
  if (!exists_locked(name)) return nullptr;
  auto c = Collection::open(root_ / name, opts_);
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
  fs::remove(root_ / name / "schema.json");
  fsync_path(root_ / name, true);
  fs::remove_all(root_ / name);
  fsync_path(root_, true);
}

std::vector<std::string> Catalog::list() const {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return out;
  std::lock_guard lock(mu_);
  for (const auto& e : fs::directory_iterator(root_))
    if (e.is_directory() && exists_locked(e.path().filename().string())) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

json Catalog::describe(const std::string& name) { return get(name).describe(); }

}  // namespace eagle::store
