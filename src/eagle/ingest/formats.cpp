#include "eagle/ingest/formats.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <fstream>
#include <functional>
#include <sstream>

#include "eagle/core/error.h"
#include "eagle/core/utf8.h"
#include "eagle/ingest/markdown/markdown.h"
#include "eagle/ingest/pdf/pdf_reader.h"
#include "eagle/ingest/text_util.h"
#include "eagle/ingest/xml/html.h"
#include "eagle/ingest/xml/jats.h"
#include "eagle/ingest/xml/pubmed.h"
#include "eagle/ingest/xml/xml_tree.h"

namespace eagle::ingest {

namespace fs = std::filesystem;

namespace {

constexpr std::pair<FileKind, std::string_view> kNames[] = {
    {FileKind::text, "text"},      {FileKind::jsonl, "jsonl"}, {FileKind::markdown, "markdown"}, {FileKind::spl, "spl"},
    {FileKind::jats, "jats"},      {FileKind::pubmed, "pubmed"}, {FileKind::pdf, "pdf"},
    {FileKind::html, "html"},      {FileKind::compounds, "compounds"}, {FileKind::image, "image"},
    {FileKind::unknown, "unknown"}};

std::string read_head(const fs::path& file, size_t bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string head(bytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(bytes));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot read " + file.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string lower_extension(const fs::path& path) { return ascii_lower(path.extension().string()); }

std::string_view file_kind_name(FileKind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "unknown";
}

FileKind file_kind_from_name(std::string_view name) {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return FileKind::unknown;
}

FileKind detect_file_kind(const fs::path& file) {
  const std::string ext = lower_extension(file);
  if (ext == ".md" || ext == ".markdown") return FileKind::markdown;
  if (ext == ".txt") return FileKind::text;
  if (ext == ".jsonl") return FileKind::jsonl;
  if (ext == ".csv") return FileKind::compounds;
  if (ext == ".pdf") return FileKind::pdf;
  if (ext == ".html" || ext == ".htm" || ext == ".xhtml") return FileKind::html;
  if (ext == ".nxml") return FileKind::jats;
  if (ext == ".png" || ext == ".jpg" || ext == ".jpeg") return FileKind::image;
  if (ext == ".xml") {
    // The root element decides.
    const std::string root = xml_root_of(file);
    if (root == "document") return FileKind::spl;
    if (root == "PubmedArticleSet") return FileKind::pubmed;
    if (root == "article") return FileKind::jats;
    if (root == "html") return FileKind::html;
  }
  return FileKind::unknown;
}

std::string xml_root_of(const fs::path& file) {
  // A DOCTYPE with a long internal subset is rare in these formats.
  return xml::root_element(read_head(file, 16384));
}

bool is_structured(FileKind kind) {
  return kind == FileKind::spl || kind == FileKind::jats || kind == FileKind::pubmed || kind == FileKind::pdf ||
         kind == FileKind::html || kind == FileKind::markdown || kind == FileKind::image;
}

bool leads_out_of(const fs::directory_entry& entry, const fs::path& folder) {
  std::error_code ec;
  if (!entry.is_symlink(ec)) return false;
  const fs::path target = fs::canonical(entry.path(), ec);
  if (ec) return true;
  const fs::path root = fs::canonical(folder, ec);
  if (ec) return true;
  auto [r_end, t_it] = std::mismatch(root.begin(), root.end(), target.begin(), target.end());
  return r_end != root.end();
}

FolderScan scan_folder(const fs::path& dir, FileKind as) {
  FolderScan out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (leads_out_of(e, dir)) {
      out.links_out.push_back(e.path());
      continue;
    }
    if (!e.is_regular_file()) continue;
    FileKind kind = detect_file_kind(e.path());
    if (kind == FileKind::text || kind == FileKind::jsonl) out.has_text_files = true;
    if (as != FileKind::unknown) {
      // A forced kind applies to the files of its family (XML for the XML formats).
      const std::string ext = lower_extension(e.path());
      const bool xml_family = ext == ".xml" || ext == ".nxml";
      if ((as == FileKind::spl || as == FileKind::jats || as == FileKind::pubmed) && xml_family) kind = as;
      if (kind != as) continue;
    }
    // An .xml of an unknown vocabulary is listed too: the ingest reports it.
    if (is_structured(kind) || (kind == FileKind::unknown && lower_extension(e.path()) == ".xml"))
      out.structured.emplace_back(e.path(), kind);
  }
  std::sort(out.structured.begin(), out.structured.end());
  return out;
}

namespace {

// SHA-256 of what `feed` passes to its callback, as 64 lower-case hex digits.
std::string sha256_hex(const std::function<void(const std::function<void(const void*, size_t)>&)>& feed) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    fail(ErrorCode::internal, "cannot start a SHA-256 digest");
  feed([&](const void* data, size_t n) { EVP_DigestUpdate(ctx.get(), data, n); });
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  std::string hex;
  char two[3];
  for (unsigned int i = 0; i < n; ++i) {
    std::snprintf(two, sizeof two, "%02x", md[i]);
    hex += two;
  }
  return hex;
}

}  // namespace

std::string file_sha256(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot read " + file.string());
  auto hex = sha256_hex([&](const auto& update) {
    std::vector<char> buf(1 << 16);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      if (in.gcount() > 0) update(buf.data(), static_cast<size_t>(in.gcount()));
    }
  });
  if (in.bad()) fail(ErrorCode::unavailable, "cannot read " + file.string());
  return hex;
}

std::string bytes_sha256(std::string_view bytes) {
  return sha256_hex([&](const auto& update) { update(bytes.data(), bytes.size()); });
}

std::vector<Article> read_documents(const fs::path& file, FileKind kind, const std::string& document_id,
                                    bool repair) {
  const std::string source = file.string();
  switch (kind) {
    case FileKind::markdown: {
      std::string text = read_all(file);
      if (auto bad = first_invalid_utf8(text)) {
        if (!repair)
          fail(ErrorCode::invalid_argument, source + ": invalid UTF-8 at byte " + std::to_string(*bad) +
                                                " (give --repair-utf8 to replace it with U+FFFD, or --skip-bad)");
        text = repair_utf8(text);
      }
      return {read_markdown(text, source, document_id)};
    }
    case FileKind::jats:
      return {read_jats(read_all(file), source, document_id)};
    case FileKind::pubmed:
      return read_pubmed(read_all(file), source);
    case FileKind::html:
      return {read_html(read_all(file), source, document_id)};
    case FileKind::pdf:
      return {read_pdf(file, document_id)};
    default:
      fail(ErrorCode::invalid_argument, source + ": not a document format (" + std::string(file_kind_name(kind)) + ")");
  }
}

}  // namespace eagle::ingest
