#include "eagle/ingest/corpus_reader.h"

#include <algorithm>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "eagle/core/json_input.h"
#include "eagle/core/error.h"
#include "eagle/core/utf8.h"
#include "eagle/ingest/formats.h"
#include "eagle/ingest/text_util.h"

namespace eagle::ingest {
namespace fs = std::filesystem;
using nlohmann::json;

InputFormat parse_input_format(const std::string& name) {
  if (name == "auto") return InputFormat::auto_detect;
  if (name == "beir") return InputFormat::beir;
  if (name == "jsonl") return InputFormat::jsonl;
  if (name == "folder") return InputFormat::folder;
  fail(ErrorCode::invalid_argument,
       "unknown input format '" + name + "': expected auto, beir, jsonl or folder");
}

Document parse_json_record(const std::string& line) {
  const json j = parse_json_input(line, "the record");
  if (!j.is_object()) fail(ErrorCode::invalid_argument, "a record must be a JSON object");
  Document d;
  auto id_it = j.find("_id");
  if (id_it == j.end()) id_it = j.find("id");
  if (id_it == j.end()) fail(ErrorCode::invalid_argument, "record has no \"_id\" or \"id\" field");
  if (id_it->is_string()) d.id = id_it->get<std::string>();
  else if (id_it->is_number_integer()) d.id = std::to_string(id_it->get<int64_t>());
  else fail(ErrorCode::invalid_argument, "record id must be a string or an integer");
  if (d.id.empty()) fail(ErrorCode::invalid_argument, "record id is empty");
  auto get_text = [&](const char* key, std::string& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return false;
    if (!it->is_string())
      fail(ErrorCode::invalid_argument, std::string("field \"") + key + "\" must be a string");
    out = it->get<std::string>();
    return true;
  };
  get_text("title", d.title);
  if (!get_text("text", d.text) && !get_text("contents", d.text))
    fail(ErrorCode::invalid_argument, "record has no \"text\" field");
  json meta = json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& k = it.key();
    if (k == "_id" || k == "id" || k == "title" || k == "text" || k == "contents") continue;
    if (k == "metadata" && it->is_object()) {
      for (auto m = it->begin(); m != it->end(); ++m) meta[m.key()] = m.value();
    } else {
      meta[k] = it.value();
    }
  }
  // Tags become the registry's keywords: a list of non-empty strings, else the record
  // is bad (reported with its line; skippable).
  if (auto t = meta.find("tags"); t != meta.end()) {
    if (!t->is_array() ||
        !std::all_of(t->begin(), t->end(), [](const json& e) { return e.is_string() && !e.get<std::string>().empty(); }))
      fail(ErrorCode::invalid_argument, "field \"tags\" must be a list of non-empty strings");
  }
  if (auto k = meta.find("document_id"); k != meta.end() && !(k->is_string() && !k->get<std::string>().empty()))
    fail(ErrorCode::invalid_argument, "field \"document_id\" must be a non-empty string");
  d.metadata_json = meta.dump();
  return d;
}


std::vector<Document> split_markdown(const std::string& doc_id, const std::string& content) {
  std::vector<Document> out;
  std::vector<std::string> heading_path;
  std::string body;
  std::string title;
  // A section's id is its heading path, not its position, so an edit elsewhere in the
  // file keeps it; a path repeated in one file gets "~2", "~3" in order.
  std::map<std::string, size_t> path_seen;
  auto flush = [&]() {
    auto first = body.find_first_not_of(" \t\r\n");
    if (first != std::string::npos) {
      Document d;
      const std::string part = slug(title);
      const size_t n = ++path_seen[part];
      d.id = doc_id + "#" + part + (n > 1 ? "~" + std::to_string(n) : "");
      d.title = title;
      d.text = body.substr(first);
      while (!d.text.empty() && std::isspace(static_cast<unsigned char>(d.text.back())))
        d.text.pop_back();
      json meta = {{"document_id", doc_id}, {"path", title}};
      // The caller checks the text's UTF-8 (read_corpus does); a bad byte here must
      // not throw from inside the JSON library.
      d.metadata_json = meta.dump(-1, ' ', false, json::error_handler_t::replace);
      out.push_back(std::move(d));
    }
    body.clear();
  };
  std::istringstream in(content);
  std::string line;
  bool in_fence = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) in_fence = !in_fence;
    size_t level = 0;
    while (!in_fence && level < line.size() && line[level] == '#') ++level;
    if (level >= 1 && level <= 6 && level < line.size() && line[level] == ' ') {
      flush();
      std::string heading = line.substr(level + 1);
      while (!heading.empty() && (heading.back() == '#' || heading.back() == ' ' || heading.back() == '\r'))
        heading.pop_back();
      heading_path.resize(std::min(heading_path.size(), level - 1));
      while (heading_path.size() < level - 1) heading_path.emplace_back();
      heading_path.push_back(heading);
      title.clear();
      for (const auto& h : heading_path) {
        if (h.empty()) continue;
        if (!title.empty()) title += " / ";
        title += h;
      }
      continue;
    }
    body += line;
    body += '\n';
  }
  flush();
  return out;
}

namespace {

// A path as messages show it: file names are bytes, messages are UTF-8 text.
std::string shown(const fs::path& p) { return repair_utf8(p.string()); }

// Checks `text` (bytes [base, base + size) of a file): valid, repaired when asked, or
// an error naming the byte offset of the first bad sequence (the caller names the file).
void check_utf8(std::string& text, uint64_t base, const ReadOptions& opt) {
  auto bad = first_invalid_utf8(text);
  if (!bad) return;
  if (opt.repair_utf8) {
    text = repair_utf8(text);
    return;
  }
  fail(ErrorCode::invalid_argument, "invalid UTF-8 at byte " + std::to_string(base + *bad) +
                                        " (give --repair-utf8 to replace it with U+FFFD, or --skip-bad)");
}

// Where documents go as they are read, and the count so far (for progress).
struct Sink {
  const DocumentFn& emit;
  std::vector<BadRecord>& skipped;
  uint64_t documents = 0;
  void add(Document&& d) {
    ++documents;
    emit(std::move(d));
  }
};

void read_jsonl_file(const fs::path& file, const ReadOptions& opt, Sink& result, uint64_t& bytes_done,
                     uint64_t total_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot open " + shown(file));
  std::string line;
  uint64_t lineno = 0;
  uint64_t offset = 0;  // of the line in the file
  while (std::getline(in, line)) {
    ++lineno;
    const uint64_t line_start = offset;
    offset += line.size() + 1;
    bytes_done += line.size() + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Document d;
    try {
      check_utf8(line, line_start, opt);
      d = parse_json_record(line);
    } catch (const Error& e) {
      if (!opt.skip_bad)
        fail(e.code(), shown(file) + ":" + std::to_string(lineno) + ": " + e.what());
      result.skipped.push_back({shown(file), lineno, e.what()});
      continue;
    }
    // Outside the handler: an error of the consumer (a failed write) is not a bad record.
    result.add(std::move(d));
    if (opt.progress && opt.progress_every && result.documents % opt.progress_every == 0)
      opt.progress(result.documents, bytes_done, total_bytes);
  }
}


bool is_text_file(const fs::path& p) {
  const auto ext = lower_extension(p);
  return ext == ".md" || ext == ".markdown" || ext == ".txt";
}

// `files` under `dir` (ids are paths relative to it); a single file's dir is its parent.
void read_files(const fs::path& dir, const std::vector<fs::path>& files, const ReadOptions& opt, Sink& result) {
  uint64_t total = 0, done = 0;
  for (const auto& f : files) total += fs::file_size(f);
  for (const auto& f : files) {
    auto rel = fs::relative(f, dir).generic_string();
    std::string file_name = f.filename().string();
    auto ext = f.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
    if (ext == ".jsonl") {
      read_jsonl_file(f, opt, result, done, total);
      continue;
    }
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string content = ss.str();
    done += content.size();
    try {
      // The file's name becomes its document id: it must be text too.
      if (first_invalid_utf8(rel)) {
        if (!opt.repair_utf8)
          fail(ErrorCode::invalid_argument, "the file name is not valid UTF-8 (give --repair-utf8 to replace the "
                                            "bad bytes with U+FFFD, or --skip-bad)");
        rel = repair_utf8(rel);
        file_name = repair_utf8(file_name);
      }
      check_utf8(content, 0, opt);
    } catch (const Error& e) {
      if (!opt.skip_bad) fail(e.code(), shown(f) + ": " + e.what());
      result.skipped.push_back({shown(f), 0, e.what()});
      continue;
    }
    if (ext == ".txt") {
      Document d;
      d.id = rel;
      d.text = content;
      d.metadata_json = json{{"document_id", rel}, {"file_name", file_name}}.dump();
      if (d.text.find_first_not_of(" \t\r\n") == std::string::npos) {
        if (!opt.skip_bad) fail(ErrorCode::invalid_argument, shown(f) + ": empty file");
        result.skipped.push_back({shown(f), 0, "empty file"});
        continue;
      }
      result.add(std::move(d));
    } else {
      auto parts = split_markdown(rel, content);
      for (auto& p : parts) {
        auto meta = json::parse(p.metadata_json);
        meta["file_name"] = file_name;
        p.metadata_json = meta.dump();
        result.add(std::move(p));
      }
    }
    if (opt.progress) opt.progress(result.documents, done, total);
  }
}

void read_folder(const fs::path& dir, const ReadOptions& opt, Sink& result) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (leads_out_of(e, dir)) {
      result.skipped.push_back({fs::relative(e.path(), dir).generic_string(), 0,
                                "a link that leads out of the folder; not followed"});
      continue;
    }
    if (!e.is_regular_file()) continue;
    const auto ext = lower_extension(e.path());
    if (!opt.markdown_files && (ext == ".md" || ext == ".markdown")) continue;
    if (is_text_file(e.path()) || ext == ".jsonl") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // deterministic ids and order
  read_files(dir, files, opt, result);
}

}  // namespace

uint64_t input_bytes(const fs::path& input) {
  std::error_code ec;
  if (!fs::is_directory(input, ec)) {
    const auto n = fs::file_size(input, ec);
    return ec ? 0 : n;
  }
  if (fs::exists(input / "corpus.jsonl", ec)) return input_bytes(input / "corpus.jsonl");
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(input, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (!leads_out_of(*it, input) && it->is_regular_file(ec)) total += it->file_size(ec);
  return total;
}

void stream_corpus(const fs::path& input, const ReadOptions& opt, const DocumentFn& on_document,
                   std::vector<BadRecord>& skipped) {
  Sink sink{on_document, skipped};
  std::error_code ec;
  if (!fs::exists(input, ec)) fail(ErrorCode::not_found, "input not found: " + input.string());
  InputFormat fmt = opt.format;
  fs::path file = input;
  if (fmt == InputFormat::auto_detect || fmt == InputFormat::beir) {
    if (fs::is_directory(input) && fs::exists(input / "corpus.jsonl")) {
      fmt = InputFormat::beir;
      file = input / "corpus.jsonl";
    } else if (fs::is_directory(input)) {
      if (fmt == InputFormat::beir)
        fail(ErrorCode::invalid_argument, input.string() + " has no corpus.jsonl (BEIR layout)");
      fmt = InputFormat::folder;
    } else if (fmt == InputFormat::auto_detect && is_text_file(input)) {
      fmt = InputFormat::folder;  // one Markdown or text file, read as a folder reads it
    } else {
      fmt = InputFormat::jsonl;
    }
  }
  if (fmt == InputFormat::folder && !fs::is_directory(input) && is_text_file(input)) {
    read_files(input.has_parent_path() ? input.parent_path() : fs::path("."), {input}, opt, sink);
  } else if (fmt == InputFormat::folder) {
    if (!fs::is_directory(input)) fail(ErrorCode::invalid_argument, input.string() + " is not a folder");
    read_folder(input, opt, sink);
  } else {
    uint64_t done = 0;
    read_jsonl_file(file, opt, sink, done, fs::file_size(file));
  }
}

ReadResult read_corpus(const fs::path& input, const ReadOptions& opt) {
  ReadResult result;
  // Duplicate ids would make results ambiguous: report the second occurrence.
  std::unordered_set<std::string> seen;
  stream_corpus(
      input, opt,
      [&](Document&& d) {
        if (!seen.insert(d.id).second) {
          if (!opt.skip_bad)
            fail(ErrorCode::conflict, "duplicate document id '" + d.id + "' in " + input.string());
          result.skipped.push_back({input.string(), 0, "duplicate document id '" + d.id + "'"});
          return;
        }
        result.documents.push_back(std::move(d));
      },
      result.skipped);
  return result;
}

}  // namespace eagle::ingest
