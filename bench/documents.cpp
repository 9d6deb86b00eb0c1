// bench_documents: how fast the structured-document readers turn files into chunk rows
// (per-format ingest speed), against the floor their libraries set.
//
// For each format in ../shared/data/docs (pdf, jats, pubmed), every file is read and
// chunked (ingest::read_documents + chunk_article) `--rounds` times; the peer, in the
// same run on the same files, is the library alone: poppler's plain text extraction of
// every page (page::text(), no layout work) for PDF, and a libxml2 parse of the file
// (xmlReadMemory, no tree walk) for the XML formats. One JSON line per format with
// files/s, pages/s (PDF), chunks, and eagle_s / peer_s: what the layout rules, the tree
// walk and the chunking cost on top of the parse. End-to-end ingest (embedding,
// store) is timed by `eagle ingest` itself (docs/benchmarks.md).
#include "eagle/app/build_paths.h"
#include <libxml/parser.h>
#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-page.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "eagle/core/error.h"
#include "eagle/ingest/article/article_chunker.h"
#include "eagle/ingest/formats.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace eagle::ingest;

namespace {

double secs(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The library alone: what any reader of the format pays.
size_t peer_read(const fs::path& file, FileKind kind) {
  if (kind == FileKind::pdf) {
    std::unique_ptr<poppler::document> doc(poppler::document::load_from_file(file.string()));
    if (!doc) eagle::fail(eagle::ErrorCode::invalid_argument, "poppler cannot open " + file.string());
    size_t chars = 0;
    for (int i = 0; i < doc->pages(); ++i) {
      std::unique_ptr<poppler::page> page(doc->create_page(i));
      if (page) chars += page->text().to_utf8().size();
    }
    return chars;
  }
  const std::string bytes = read_all(file);
  xmlDoc* doc = xmlReadMemory(bytes.data(), static_cast<int>(bytes.size()), file.c_str(), nullptr,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  const size_t ok = doc != nullptr;
  xmlFreeDoc(doc);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_documents: structured-document readers + chunker vs the parse alone"};
  std::string docs_dir = std::string(eagle::app::build_shared_data()) + "/docs";
  size_t rounds = 5;
  app.add_option("--docs", docs_dir, "folder with pdf/, jats/, pubmed/ subfolders")->capture_default_str();
  app.add_option("--rounds", rounds, "passes over each format's files (the best pass is reported)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  poppler::set_debug_error_function([](const std::string&, void*) {}, nullptr);
  xmlInitParser();
  try {
    std::cout << json{{"bench", "documents"},
                      {"build", {{"compiler", __VERSION__}, {"flags", "project default (-O2, x86-64-v2)"}}},
                      {"peer", "poppler-cpp page::text() / libxml2 xmlReadMemory"}}
                     .dump()
              << "\n";
    for (const std::string format : {"pdf", "jats", "pubmed"}) {
      const fs::path dir = fs::path(docs_dir) / format;
      if (!fs::is_directory(dir)) eagle::fail(eagle::ErrorCode::not_found, "missing " + dir.string());
      std::vector<std::pair<fs::path, FileKind>> files;
      for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file()) files.emplace_back(e.path(), detect_file_kind(e.path()));
      std::sort(files.begin(), files.end());
      size_t documents = 0, pages = 0, chunks = 0, bytes = 0;
      double eagle_best = 1e300, peer_best = 1e300;
      for (size_t r = 0; r < rounds; ++r) {
        documents = pages = chunks = bytes = 0;
        auto t0 = Clock::now();
        for (const auto& [file, kind] : files) {
          bytes += fs::file_size(file);
          for (const auto& a : read_documents(file, kind, file.filename().string())) {
            ++documents;
            pages += static_cast<size_t>(a.pages);
            chunks += chunk_article(a).size();
          }
        }
        eagle_best = std::min(eagle_best, secs(t0));
        t0 = Clock::now();
        for (const auto& [file, kind] : files) peer_read(file, kind);
        peer_best = std::min(peer_best, secs(t0));
      }
      json line = {{"format", format},        {"files", files.size()},
                   {"documents", documents},  {"chunks", chunks},
                   {"mb", static_cast<double>(bytes) / 1e6},
                   {"eagle_s", eagle_best},   {"peer_s", peer_best},
                   {"documents_per_s", static_cast<double>(documents) / eagle_best},
                   {"eagle_over_peer", eagle_best / peer_best}};
      if (pages) line["pages"] = pages, line["pages_per_s"] = static_cast<double>(pages) / eagle_best;
      std::cout << line.dump() << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_documents: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
