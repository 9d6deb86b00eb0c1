// bench_store: Eagle's own row store (write-ahead log + checksummed segments) against
// LMDB (Debian liblmdb 0.9) as the store of rows, the established design to measure against.
// Both hold the same rows (BioASQ-made passages, GloVe vectors computed once before
// either runs) and answer from the same in-memory indexes (BM25, HNSW, scalar); only
// where rows live and how the indexes come back differ:
//   eagle: Collection::create + upsert per batch (log fsynced per batch) + checkpoint;
//          open = Collection::open (segment with the indexes, checksums verified).
//   lmdb:  one LMDB write transaction per batch (fsynced at commit: LMDB's default),
//          rows in a compact binary form (text, values, floats), indexes in an
//          in-memory Collection;
//          open = read every row back and rebuild the indexes (LMDB stores no index).
// Search: BM25 top-10 for each query, then each hit's row (eagle: from memory; lmdb:
// mdb_get from the map). JSON lines; ratios are lmdb over eagle.
#include <CLI/CLI.hpp>
#include <lmdb.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_rows.h"
#include "bench_support.h"
#include "eagle/app/config.h"
#include "eagle/core/schema.h"
#include "eagle/encode/static/word_vectors.h"
#include "eagle/eval/beir.h"
#include "eagle/eval/synthetic_corpus.h"
#include "eagle/ingest/corpus_reader.h"
#include "eagle/store/collection.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using eagle::store::Collection;
using eagle::store::Record;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void check(int rc, const char* what) {
  if (rc != MDB_SUCCESS) throw std::runtime_error(std::string(what) + ": " + mdb_strerror(rc));
}

struct Lmdb {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  explicit Lmdb(const fs::path& dir) {
    fs::create_directories(dir);
    check(mdb_env_create(&env), "mdb_env_create");
    check(mdb_env_set_mapsize(env, size_t{64} << 30), "mdb_env_set_mapsize");
    check(mdb_env_open(env, dir.c_str(), 0, 0644), "mdb_env_open");  // durable commits (default flags)
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env, nullptr, 0, &txn), "mdb_txn_begin");
    check(mdb_dbi_open(txn, nullptr, 0, &dbi), "mdb_dbi_open");
    check(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  ~Lmdb() { mdb_env_close(env); }
};

// A row as LMDB holds it, under its row number (8 bytes, big-endian, so a cursor
// walks rows in insertion order and the rebuilt indexes number them as before): id,
// text and the values as JSON (each length first), then the vector's floats. A hit
// reads the id, text and values without parsing the vector.
std::string row_key(uint64_t row) {
  std::string k(8, '\0');
  for (int i = 7; i >= 0; --i, row >>= 8) k[static_cast<size_t>(i)] = static_cast<char>(row & 0xff);
  return k;
}

std::string encode_row(const Record& r) {
  json values = json::array();
  for (const auto& v : r.values) values.push_back(eagle::value_to_json(v));
  const std::string vj = values.dump();
  std::string out;
  auto put_u32 = [&](uint32_t n) { out.append(reinterpret_cast<const char*>(&n), 4); };
  put_u32(static_cast<uint32_t>(r.id.size()));
  out += r.id;
  put_u32(static_cast<uint32_t>(r.text.size()));
  out += r.text;
  put_u32(static_cast<uint32_t>(vj.size()));
  out += vj;
  out.append(reinterpret_cast<const char*>(r.vector.data()), r.vector.size() * sizeof(float));
  return out;
}

Record decode_row(std::string_view bytes, const eagle::CollectionSchema& schema, bool with_vector) {
  Record r;
  auto get_u32 = [&](size_t at) {
    uint32_t n;
    std::memcpy(&n, bytes.data() + at, 4);
    return n;
  };
  const uint32_t il = get_u32(0);
  r.id = std::string(bytes.substr(4, il));
  bytes.remove_prefix(4 + il);
  const uint32_t tl = get_u32(0);
  r.text = std::string(bytes.substr(4, tl));
  const uint32_t vl = get_u32(4 + tl);
  const auto values = json::parse(bytes.substr(8 + tl, vl));
  for (size_t i = 0; i < schema.fields.size(); ++i)
    r.values.push_back(eagle::value_from_json(values[i], schema.fields[i].type, schema.fields[i].name));
  if (with_vector) {
    r.vector.resize(schema.vector.dim);
    std::memcpy(r.vector.data(), bytes.data() + 8 + tl + vl, schema.vector.dim * sizeof(float));
  }
  return r;
}

std::vector<std::vector<Record>> batches_of(const std::vector<Record>& rows, size_t batch) {
  std::vector<std::vector<Record>> out;
  for (size_t i = 0; i < rows.size(); i += batch)
    out.emplace_back(rows.begin() + static_cast<std::ptrdiff_t>(i),
                     rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), i + batch)));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_store: Eagle's log + segments vs LMDB as the row store (JSON lines)"};
  std::string beir, work, glove = eagle::app::glove_file_of(eagle::app::Config{});  // the cache eagle makes
  uint64_t rows = 200000;
  size_t batch = 1024;
  app.add_option("--beir", beir, "BEIR folder: its passages make the rows, its queries are searched")->required();
  app.add_option("--rows", rows, "rows")->capture_default_str();
  app.add_option("--batch", batch, "rows per durable write")->capture_default_str();
  app.add_option("--glove", glove, "converted GloVe file (eagle makes it on first use: `eagle ingest` or `eagle search`)")->capture_default_str();
  app.add_option("--work", work, "folder for both stores (default: a temporary folder, removed)");
  CLI11_PARSE(app, argc, argv);
  try {
    const bool temporary = work.empty();
    const fs::path root = eagle::bench::fresh_work_folder(work, "store");
    const auto passages = eagle::bench::read_passages(beir);
    auto encoder = eagle::encode::make_glove_encoder("glove", glove);
    const auto schema = eagle::chunk_schema("bench", encoder->info().dim, encoder->info().metric);
    const auto records = eagle::bench::passage_rows(passages, rows, *encoder, schema);
    std::vector<std::string> queries;
    for (const auto& q : eagle::eval::load_queries(fs::path(beir) / "queries.jsonl")) queries.push_back(q.text);
    std::cout << json{{"bench", "store"}, {"build_flags", "-O2 -march=x86-64-v2 (CMake Release)"},
                      {"peer", std::string(MDB_VERSION_STRING) + " (Debian liblmdb), default flags"},
                      {"rows", rows}, {"batch", batch}, {"queries", queries.size()}}
                     .dump()
              << std::endl;
    const auto batches = batches_of(records, batch);

    // Ingest.
    const fs::path eagle_dir = root / "eagle", lmdb_dir = root / "lmdb";
    auto t0 = Clock::now();
    {
      auto c = Collection::create(eagle_dir, schema);
      for (const auto& b : batches) c->upsert(b);
      c->checkpoint();
    }
    const double eagle_ingest = seconds_since(t0);
    t0 = Clock::now();
    {
      Lmdb db(lmdb_dir);
      auto mem = Collection::in_memory(schema);
      uint64_t next_row = 0;
      for (const auto& b : batches) {
        MDB_txn* txn = nullptr;
        check(mdb_txn_begin(db.env, nullptr, 0, &txn), "mdb_txn_begin");
        for (const auto& r : b) {
          const std::string key = row_key(next_row++), value = encode_row(r);
          MDB_val k{key.size(), const_cast<char*>(key.data())}, v{value.size(), const_cast<char*>(value.data())};
          check(mdb_put(txn, db.dbi, &k, &v, 0), "mdb_put");
        }
        check(mdb_txn_commit(txn), "mdb_txn_commit");
        mem->upsert(b);
      }
    }
    const double lmdb_ingest = seconds_since(t0);
    std::cout << json{{"bench", "store"}, {"step", "ingest"}, {"eagle_seconds", eagle_ingest},
                      {"lmdb_seconds", lmdb_ingest}, {"lmdb_over_eagle", lmdb_ingest / eagle_ingest},
                      {"eagle_bytes", eagle::bench::folder_bytes(eagle_dir)}, {"lmdb_bytes", eagle::bench::folder_bytes(lmdb_dir)}}
                     .dump()
              << std::endl;

    // Open.
    t0 = Clock::now();
    auto eagle_store = Collection::open(eagle_dir);
    const double eagle_open = seconds_since(t0);
    t0 = Clock::now();
    Lmdb db(lmdb_dir);
    auto mem = Collection::in_memory(schema);
    {
      MDB_txn* txn = nullptr;
      check(mdb_txn_begin(db.env, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
      MDB_cursor* cur = nullptr;
      check(mdb_cursor_open(txn, db.dbi, &cur), "mdb_cursor_open");
      MDB_val k, v;
      std::vector<Record> pending;
      for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == MDB_SUCCESS; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        pending.push_back(decode_row(std::string_view(static_cast<const char*>(v.mv_data), v.mv_size), schema, true));
        if (pending.size() == batch) mem->upsert(std::move(pending)), pending.clear();
      }
      if (!pending.empty()) mem->upsert(std::move(pending));
      mdb_cursor_close(cur);
      mdb_txn_abort(txn);
    }
    const double lmdb_open = seconds_since(t0);
    if (mem->count() != rows || eagle_store->count() != rows) throw std::runtime_error("row counts differ after open");
    std::cout << json{{"bench", "store"}, {"step", "open"}, {"eagle_seconds", eagle_open},
                      {"lmdb_rebuild_seconds", lmdb_open}, {"lmdb_over_eagle", lmdb_open / eagle_open}}
                     .dump()
              << std::endl;

    // Search: BM25 top-10 and the rows of the hits.
    size_t eagle_chars = 0, lmdb_chars = 0;
    t0 = Clock::now();
    for (const auto& q : queries)
      for (const auto& r : eagle_store->records(eagle_store->search_text(q, 10))) eagle_chars += r.text.size();
    const double eagle_search = seconds_since(t0);
    t0 = Clock::now();
    {
      MDB_txn* txn = nullptr;
      check(mdb_txn_begin(db.env, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
      for (const auto& q : queries) {
        for (const auto& h : mem->search_text(q, 10)) {
          const std::string key = row_key(h.row);
          MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
          check(mdb_get(txn, db.dbi, &k, &v), "mdb_get");
          const auto row = decode_row(std::string_view(static_cast<const char*>(v.mv_data), v.mv_size), schema, false);
          if (row.id != h.id) throw std::runtime_error("lmdb row " + std::to_string(h.row) + " is not " + h.id);
          lmdb_chars += row.text.size();
        }
      }
      mdb_txn_abort(txn);
    }
    const double lmdb_search = seconds_since(t0);
    std::cout << json{{"bench", "store"}, {"step", "search"}, {"queries", queries.size()},
                      {"eagle_qps", static_cast<double>(queries.size()) / eagle_search},
                      {"lmdb_qps", static_cast<double>(queries.size()) / lmdb_search},
                      {"lmdb_over_eagle_time", lmdb_search / eagle_search},
                      {"same_hit_text", eagle_chars == lmdb_chars}}
                     .dump()
              << std::endl;
    eagle_store.reset();
    if (temporary) fs::remove_all(root);
  } catch (const std::exception& e) {
    std::cerr << "bench_store: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
