#include "eagle/store/text_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <unordered_set>

#include "eagle/core/atomic_file.h"
#include "eagle/core/binary_io.h"
#include "eagle/core/error.h"

namespace eagle::store {
namespace fs = std::filesystem;

namespace {
constexpr char kDocsMagic[8] = {'E', 'G', 'L', 'D', 'O', 'C', 'S', '\0'};

}  // namespace

bool TextStore::exists(const fs::path& dir) { return fs::exists(dir / kStoreFileName); }

TextStore TextStore::open(const fs::path& dir) {
  const auto file = dir / kStoreFileName;
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "no Eagle store at " + dir.string() + " (run `eagle ingest` first)");
  try {
    char magic[sizeof(kDocsMagic)];
    if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kDocsMagic, sizeof(magic)) != 0)
      fail(ErrorCode::invalid_argument, "bad magic");
    auto n = io::read_pod<uint64_t>(in, "document count");
    if (n > io::kMaxElements) fail(ErrorCode::invalid_argument, "corrupt document count");
    std::vector<Document> docs(n);
    for (auto& d : docs) {
      d.id = io::read_str(in, "document id");
      d.title = io::read_str(in, "title");
      d.text = io::read_str(in, "text");
      d.metadata_json = io::read_str(in, "metadata");
    }
    auto index = index::Bm25Index::load(in);
    if (index.size() != docs.size())
      fail(ErrorCode::invalid_argument, "index and document table disagree on the count");
    TextStore store(index.params(), index.analyzer().options());
    store.index_ = std::move(index);
    store.docs_ = std::move(docs);
    for (uint32_t i = 0; i < store.docs_.size(); ++i) store.by_id_.emplace(store.docs_[i].id, i);
    return store;
  } catch (const Error& e) {
    fail(e.code(), file.string() + ": " + e.what());
  }
}

TextStore TextStore::open_or_create(const fs::path& dir, index::Bm25Params params,
                                    text::AnalyzerOptions analyzer) {
  if (exists(dir)) return open(dir);
  return TextStore(params, analyzer);
}

void TextStore::add(std::vector<Document> docs, const std::function<void(size_t, size_t)>& progress) {
  std::unordered_set<std::string> incoming;
  for (const auto& d : docs) {
    if (by_id_.count(d.id) || !incoming.insert(d.id).second)
      fail(ErrorCode::conflict, "document id '" + d.id + "' is already in the store");
  }
  const size_t total = docs.size();
  size_t done = 0;
  for (auto& d : docs) {
    if (progress && ++done % 1000 == 0) progress(done, total);
    index_.add(d.indexed_text());
    by_id_.emplace(d.id, static_cast<uint32_t>(docs_.size()));
    docs_.push_back(std::move(d));
  }
}

void TextStore::save(const fs::path& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(ErrorCode::unavailable, "cannot create " + dir.string() + ": " + ec.message());
  write_file_atomic(dir / kStoreFileName, [&](std::ostream& out) {
    out.write(kDocsMagic, sizeof(kDocsMagic));
    io::write_pod<uint64_t>(out, docs_.size());
    for (const auto& d : docs_) {
      io::write_str(out, d.id);
      io::write_str(out, d.title);
      io::write_str(out, d.text);
      io::write_str(out, d.metadata_json);
    }
    index_.save(out);
  });
}

std::vector<ScoredDocument> TextStore::search(const std::string& query, size_t k,
                                              index::TopKAlgorithm algo) const {
  auto hits = index_.search(query, k, algo);
  std::vector<ScoredDocument> out;
  out.reserve(hits.size());
  for (size_t i = 0; i < hits.size(); ++i)
    out.push_back({&docs_[hits[i].doc], hits[i].score, static_cast<uint32_t>(i + 1)});
  return out;
}

const Document* TextStore::find(const std::string& id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &docs_[it->second];
}

}  // namespace eagle::store
