#include "eagle/encode/encoder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "eagle/core/error.h"

namespace eagle::encode {

namespace {

class IdentifiedEncoder final : public Encoder {
 public:
  IdentifiedEncoder(std::unique_ptr<Encoder> inner, std::string identity) : inner_(std::move(inner)) {
    info_ = inner_->info();
    info_.identity = std::move(identity);
  }
  const EncoderInfo& info() const override { return info_; }
  std::vector<Embedding> encode(const std::vector<std::string>& inputs, EncodeMode mode) override {
    return inner_->encode(inputs, mode);
  }
  std::vector<Embedding> encode_images(const std::vector<std::string_view>& images) override {
    return inner_->encode_images(images);
  }

 private:
  std::unique_ptr<Encoder> inner_;
  EncoderInfo info_;
};

void fnv(uint64_t& h, const char* data, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 1099511628211ull;
}

void fingerprint_file(uint64_t& h, const std::filesystem::path& file) {
  constexpr size_t kSample = 1 << 20;  // first and last MiB
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot read " + file.string());
  const auto size = std::filesystem::file_size(file);
  const std::string name = file.filename().string() + ":" + std::to_string(size);
  fnv(h, name.data(), name.size());
  std::vector<char> buf(kSample);
  in.read(buf.data(), static_cast<std::streamsize>(kSample));
  fnv(h, buf.data(), static_cast<size_t>(in.gcount()));
  if (size > 2 * kSample) {
    in.clear();
    in.seekg(static_cast<std::streamoff>(size - kSample));
    in.read(buf.data(), static_cast<std::streamsize>(kSample));
    fnv(h, buf.data(), static_cast<size_t>(in.gcount()));
  }
}

std::map<std::string, std::string> identity_fields(const std::string& identity) {
  std::map<std::string, std::string> out;
  std::istringstream in(identity);
  for (std::string field; in >> field;) {
    const auto eq = field.find('=');
    out[field.substr(0, eq)] = eq == std::string::npos ? "" : field.substr(eq + 1);
  }
  return out;
}

}  // namespace

std::vector<Embedding> Encoder::encode_images(const std::vector<std::string_view>&) {
  fail(ErrorCode::invalid_argument, "encoder '" + info().label + "' does not embed images");
}

std::unique_ptr<Encoder> identified(std::unique_ptr<Encoder> inner, const std::string& fields) {
  const auto& info = inner->info();
  std::string identity = fields + " dim=" + std::to_string(info.dim) + " metric=" + std::string(metric_name(info.metric));
  return std::make_unique<IdentifiedEncoder>(std::move(inner), std::move(identity));
}

std::string model_fingerprint(const std::string& path) {
  namespace fs = std::filesystem;
  // Every Engine start fingerprints its encoders, the default slots the same GloVe file
  // five times: once per path and modification time per process is enough.
  static std::mutex mu;
  static std::map<std::string, std::pair<fs::file_time_type, std::string>> known;
  std::error_code ec;
  const auto mtime = fs::last_write_time(path, ec);
  {
    std::lock_guard lock(mu);
    if (auto it = known.find(path); !ec && it != known.end() && it->second.first == mtime) return it->second.second;
  }
  uint64_t h = 14695981039346656037ull;
  if (fs::is_directory(path)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) fingerprint_file(h, f);
  } else {
    fingerprint_file(h, path);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  if (!ec) {
    std::lock_guard lock(mu);
    known[path] = {mtime, hex};
  }
  return hex;
}

std::string identity_changes(const std::string& recorded, const std::string& current) {
  const auto a = identity_fields(recorded), b = identity_fields(current);
  std::string out;
  auto add = [&](const std::string& key, const std::string& from, const std::string& to) {
    out += (out.empty() ? "" : ", ") + key + ": " + (from.empty() ? "(none)" : from) + " -> " + (to.empty() ? "(none)" : to);
  };
  for (const auto& [k, v] : a)
    if (auto it = b.find(k); it == b.end() || it->second != v) add(k, v, it == b.end() ? "" : it->second);
  for (const auto& [k, v] : b)
    if (!a.count(k)) add(k, "", v);
  return out;
}

bool same_identity(const std::string& recorded, const std::string& current) {
  if (recorded.empty() || current.empty() || recorded == current) return true;
  // A model file found at another path (a moved build folder) with the same
  // fingerprint makes the same vectors.
  auto a = identity_fields(recorded), b = identity_fields(current);
  if (a.count("fingerprint") && b.count("fingerprint")) {
    a.erase("path");
    b.erase("path");
  }
  return a == b;
}

void check_encoder_identity(const CollectionSchema& schema, const Encoder& encoder) {
  const auto& recorded = schema.vector.encoder_identity;
  const auto& info = encoder.info();
  if (same_identity(recorded, info.identity)) return;
  fail(ErrorCode::conflict,
       "collection '" + schema.name + "' holds vectors made by encoder '" + schema.vector.encoder +
           "' as it was configured then; '" + info.label + "' is now configured differently (" +
           identity_changes(recorded, info.identity) +
           "), so its vectors would not compare with the stored ones: re-embed the collection (eagle reembed "
           "--collection " + schema.name + " --encoder " + info.label + "), or configure '" + info.label +
           "' as before");
}

void EncoderRegistry::add(std::unique_ptr<Encoder> e) {
  auto label = e->info().label;
  if (label.empty()) fail(ErrorCode::invalid_argument, "an encoder needs a label");
  if (has_encoder(label)) fail(ErrorCode::conflict, "encoder label '" + label + "' is registered twice");
  encoders_.emplace(label, std::move(e));
}

void EncoderRegistry::add(std::unique_ptr<Reranker> r) {
  auto label = r->label();
  if (label.empty()) fail(ErrorCode::invalid_argument, "a reranker needs a label");
  if (has_reranker(label)) fail(ErrorCode::conflict, "reranker label '" + label + "' is registered twice");
  rerankers_.emplace(label, std::move(r));
}

bool EncoderRegistry::has_encoder(std::string_view l) const { return encoders_.find(l) != encoders_.end(); }
bool EncoderRegistry::has_reranker(std::string_view l) const { return rerankers_.find(l) != rerankers_.end(); }

std::vector<std::string> EncoderRegistry::labels() const {
  std::vector<std::string> out;
  for (const auto& [l, e] : encoders_) out.push_back(l);
  for (const auto& [l, r] : rerankers_) out.push_back(l);
  return out;
}

namespace {
std::string known(const EncoderRegistry& r) {
  std::string s;
  for (const auto& l : r.labels()) s += (s.empty() ? "" : ", ") + l;
  return s.empty() ? "(none)" : s;
}
}  // namespace

Encoder& EncoderRegistry::encoder(std::string_view label) const {
  auto it = encoders_.find(label);
  if (it == encoders_.end())
    fail(ErrorCode::not_found, "no encoder for label '" + std::string(label) + "'; configured: " + known(*this));
  return *it->second;
}

Reranker& EncoderRegistry::reranker(std::string_view label) const {
  auto it = rerankers_.find(label);
  if (it == rerankers_.end())
    fail(ErrorCode::not_found, "no reranker for label '" + std::string(label) + "'; configured: " + known(*this));
  return *it->second;
}

void EncoderRegistry::require(const std::vector<std::string>& labels) const {
  std::string missing;
  for (const auto& l : labels)
    if (!has_encoder(l) && !has_reranker(l)) missing += (missing.empty() ? "" : ", ") + l;
  if (!missing.empty())
    fail(ErrorCode::invalid_argument, "configuration refers to encoder labels with no implementation: " + missing +
                                          " (configured: " + known(*this) + ")");
}

}  // namespace eagle::encode
