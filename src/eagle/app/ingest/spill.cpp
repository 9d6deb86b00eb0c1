#include "eagle/app/ingest/spill.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "eagle/core/error.h"
#include "eagle/core/read_ahead.h"

namespace eagle::app {
using nlohmann::json;

namespace {

struct Spilled {
  registry::DocumentRecord d;
  std::optional<std::vector<registry::BrandName>> brands;
  std::optional<std::vector<std::string>> tags;
  std::string sha256;
};

Spilled parse(const char* line) {
  const json j = json::parse(line);
  Spilled e;
  auto& d = e.d;
  d.document_id = j.at("document_id").get<std::string>();
  d.name = j.at("name").get<std::string>();
  d.file_name = j.at("file_name").get<std::string>();
  d.document_name = j.at("document_name").get<std::string>();
  d.kb_name = j.at("kb_name").get<std::string>();
  d.plugin_namespace = j.at("plugin_namespace").get<std::string>();
  d.source_type = j.at("source_type").get<std::string>();
  d.source_uri = j.at("source_uri").get<std::string>();
  d.collections_used = j.at("collections_used").get<std::vector<std::string>>();
  if (j.contains("year")) d.year = j["year"].get<int64_t>();
  if (j.contains("brands")) {
    e.brands.emplace();
    for (const auto& b : j["brands"]) e.brands->push_back({b.at(0).get<std::string>(), b.at(1).get<std::string>()});
  }
  if (j.contains("tags")) e.tags = j["tags"].get<std::vector<std::string>>();
  e.sha256 = j.value("sha256", std::string());
  return e;
}

}  // namespace

DocumentSpill::DocumentSpill() : file_(std::tmpfile()) {
  if (!file_)
    fail(ErrorCode::unavailable,
         std::string("cannot create a temporary file for the ingest's document list: ") + std::strerror(errno));
}

DocumentSpill::~DocumentSpill() { std::fclose(file_); }

void DocumentSpill::write(const registry::DocumentRecord& d, const std::vector<registry::BrandName>* brands,
                          const std::vector<std::string>* tags, const std::string& source_sha256) {
  json j = {{"document_id", d.document_id}, {"name", d.name},
            {"file_name", d.file_name},     {"document_name", d.document_name},
            {"kb_name", d.kb_name},         {"plugin_namespace", d.plugin_namespace},
            {"source_type", d.source_type}, {"source_uri", d.source_uri},
            {"collections_used", d.collections_used}};
  if (d.year) j["year"] = *d.year;
  if (brands) {
    j["brands"] = json::array();
    for (const auto& b : *brands) j["brands"].push_back({b.brand, b.generic});
  }
  if (tags) j["tags"] = *tags;
  if (!source_sha256.empty()) j["sha256"] = source_sha256;
  const std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size())
    fail(ErrorCode::unavailable, std::string("cannot write the ingest's temporary document list: ") +
                                     std::strerror(errno));
  ++count_;
}

void DocumentSpill::for_each(const Visit& fn) {
  if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0)
    fail(ErrorCode::unavailable, std::string("cannot read the ingest's temporary document list: ") +
                                     std::strerror(errno));
  constexpr size_t kBatch = 1024;
  read_ahead<std::vector<Spilled>>(
      /*depth=*/2,
      [&](auto&& push) {
        struct LineBuffer {
          char* data = nullptr;
          size_t cap = 0;
          ~LineBuffer() { std::free(data); }
        } line;
        std::vector<Spilled> batch;
        while (::getline(&line.data, &line.cap, file_) > 0) {
          batch.push_back(parse(line.data));
          if (batch.size() == kBatch && !push(std::exchange(batch, {}))) return;
        }
        if (std::ferror(file_)) fail(ErrorCode::unavailable, "cannot read the ingest's temporary document list");
        if (!batch.empty()) push(std::move(batch));
      },
      [&](std::vector<Spilled>& batch) {
        for (auto& e : batch)
          fn(e.d, e.brands ? &*e.brands : nullptr, e.tags ? &*e.tags : nullptr, std::as_const(e.sha256));
      });
}

}  // namespace eagle::app
