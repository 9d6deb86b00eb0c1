#include "eagle/ingest/article/article_chunker.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "eagle/core/error.h"
#include "eagle/ingest/text_util.h"

namespace eagle::ingest {

using nlohmann::json;

namespace {

bool alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// FNV-1a, 32 bits as 8 hex digits: the content part of a chunk id.
std::string content_hash(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

// A citation's number token after "Table"/"Fig.": "2", "S1", "1B" (letters kept).
size_t read_token(std::string_view s, size_t i, std::string& token) {
  token.clear();
  size_t j = i;
  if (j < s.size() && (s[j] == 'S' || s[j] == 's') && j + 1 < s.size() && digit(s[j + 1])) token += 'S', ++j;
  const size_t digits = j;
  while (j < s.size() && digit(s[j])) token += s[j++];
  if (j == digits) {
    token.clear();
    return i;
  }
  // A panel letter ("1B", "2a") directly after the number, not the start of a word.
  if (j < s.size() && alpha(s[j]) && (j + 1 >= s.size() || !alpha(s[j + 1]))) ++j;
  return j;
}

std::string root_segment(const Article& a) {
  std::string base = a.id;
  if (const size_t slash = base.find_last_of('/'); slash != std::string::npos) base.erase(0, slash + 1);
  if (const size_t dot = base.find_last_of('.'); dot != std::string::npos && dot > 0 && base.size() - dot <= 5)
    base.erase(dot);
  return base.empty() ? "document" : base;
}

std::string safe_segment(std::string s) {
  std::replace(s.begin(), s.end(), '/', '-');
  return s;
}

std::string joined(const std::vector<std::string>& headings, const char* sep) {
  std::string out;
  for (const auto& h : headings) out += (out.empty() ? "" : sep) + h;
  return out;
}

// One chunk before its edges are known.
struct Chunk {
  std::string id, type, chunk_type, text;
  size_t section = 0;  // index into sections
  size_t position = 0;  // index into its section's chunks
  int page = 0;
  const Block* source = nullptr;       // tables and figures: their block
  std::vector<std::string> anchors;    // cites by anchor (xref)
  std::string caption;                 // tables and figures with a body: "<label>. <caption>" (a caption row)
};

struct Section {
  std::vector<std::string> headings;
  std::string slug;  // unique in the document ("results", a second "Results" -> "results~2")
  std::string summary_id;
  std::vector<size_t> chunks;         // direct chunks, in order
  std::vector<size_t> subsections;    // direct children
  int parent = -1;
  std::string first_text;             // for content_summary
  int page = 0;
};

}  // namespace

bool split_caption_label(std::string_view text, BlockKind kind, std::string& label, std::string& caption) {
  if (kind != BlockKind::table && kind != BlockKind::figure) return false;
  static const std::vector<std::string_view> kTable = {"Table"}, kFigure = {"Figure", "Fig.", "Fig"};
  for (std::string_view word : kind == BlockKind::table ? kTable : kFigure) {
    if (text.substr(0, word.size()) != word || word.size() >= text.size() || text[word.size()] != ' ') continue;
    size_t i = word.size();
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t num = i;
    if (i + 1 < text.size() && alpha(text[i]) && digit(text[i + 1])) ++i;  // "S1", "A2"
    if (i >= text.size() || !digit(text[i])) continue;
    while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) ++i;
    label = std::string(kind == BlockKind::table ? "Table " : "Figure ") + std::string(text.substr(num, i - num));
    while (i < text.size() && (text[i] == '.' || text[i] == ':' || text[i] == '-' || text[i] == ' ')) ++i;
    caption = std::string(text.substr(i));
    return true;
  }
  return false;
}

std::string label_key(std::string_view label, BlockKind kind) {
  if (kind != BlockKind::table && kind != BlockKind::figure) return "";
  // The number is the first token after the kind word ("Supplementary Table S2").
  size_t i = 0;
  while (i < label.size() && !digit(label[i]) &&
         !((label[i] == 'S' || label[i] == 's') && i + 1 < label.size() && digit(label[i + 1]) &&
           (i == 0 || label[i - 1] == ' ' || label[i - 1] == '.')))
    ++i;
  std::string token;
  read_token(label, i, token);
  if (token.empty()) return "";
  if (kind == BlockKind::figure)
    while (!token.empty() && alpha(token.back()) && token.size() > 1 && token != "S") token.pop_back();
  return std::string(kind == BlockKind::table ? "table:" : "figure:") + token;
}

std::vector<std::string> written_citations(std::string_view text) {
  static const std::pair<const char*, BlockKind> kWords[] = {
      {"tables", BlockKind::table}, {"table", BlockKind::table},   {"tab.", BlockKind::table},
      {"figures", BlockKind::figure}, {"figure", BlockKind::figure}, {"figs.", BlockKind::figure},
      {"fig.", BlockKind::figure},  {"figs", BlockKind::figure},  {"fig", BlockKind::figure}};
  std::vector<std::string> out;
  auto add = [&](BlockKind kind, std::string token) {
    if (kind == BlockKind::figure)
      while (token.size() > 1 && alpha(token.back())) token.pop_back();
    std::string key = std::string(kind == BlockKind::table ? "table:" : "figure:") + token;
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if ((i > 0 && alpha(text[i - 1])) || (text[i] != 'T' && text[i] != 't' && text[i] != 'F' && text[i] != 'f')) continue;
    for (const auto& [word, kind] : kWords) {
      const size_t n = std::char_traits<char>::length(word);
      if (i + n > text.size() || ascii_lower(text.substr(i, n)) != word) continue;
      size_t j = i + n;
      if (j < text.size() && alpha(text[j])) continue;  // "tablet", "figured"
      while (j < text.size() && (text[j] == ' ' || text[j] == '.')) ++j;
      std::string token, prev;
      j = read_token(text, j, token);
      if (token.empty()) break;
      add(kind, token);
      // Lists and ranges: "1 and 3", "1, 2", "2-4", "2–4" (U+2013).
      for (;;) {
        size_t k = j;
        bool range = false;
        if (text.substr(k, 5) == " and ") k += 5;
        else if (text.substr(k, 2) == ", ") k += 2;
        else if (text.substr(k, 1) == ",") k += 1;
        else if (text.substr(k, 1) == "-") k += 1, range = true;
        else if (text.substr(k, 3) == "\xE2\x80\x93") k += 3, range = true;
        else break;
        std::string next;
        const size_t after = read_token(text, k, next);
        if (next.empty()) break;
        // A range of plain numbers ("2-4"); a number of more digits than a label has is
        // no range (and would not fit a long).
        if (range && token.size() <= 4 && next.size() <= 4 && std::all_of(token.begin(), token.end(), digit) &&
            std::all_of(next.begin(), next.end(), digit)) {
          const long from = std::stol(token), to = std::stol(next);
          for (long v = from + 1; v < to && v - from <= 20; ++v) add(kind, std::to_string(v));
        }
        add(kind, next);
        token = next;
        j = after;
      }
      i = j > i ? j - 1 : i;
      break;
    }
  }
  return out;
}

namespace {

// The document's blocks as sections (in order of first appearance, each ancestor
// present) and chunks: paragraphs packed up to max_chars within a section, tables and
// figures one chunk each in their place.
struct Packed {
  std::vector<Section> sections;
  std::vector<Chunk> chunks;
};

Packed pack_blocks(const Article& a, const ArticleChunkOptions& opt) {
  std::vector<Section> sections;
  std::map<std::vector<std::string>, size_t> section_of;
  std::map<std::string, size_t> slug_seen;
  auto section_index = [&](auto&& self, const std::vector<std::string>& headings) -> size_t {
    if (auto it = section_of.find(headings); it != section_of.end()) return it->second;
    int parent = -1;
    if (headings.size() > 1) parent = static_cast<int>(self(self, std::vector<std::string>(headings.begin(), headings.end() - 1)));
    Section s;
    s.headings = headings;
    s.parent = parent;
    std::string p;
    for (const auto& h : headings) p += (p.empty() ? "" : "/") + slug(safe_segment(h));
    if (p.empty()) p = "body";
    const size_t n = ++slug_seen[p];
    s.slug = n > 1 ? p + "~" + std::to_string(n) : p;
    const size_t idx = sections.size();
    sections.push_back(std::move(s));
    if (parent >= 0) sections[static_cast<size_t>(parent)].subsections.push_back(idx);
    section_of.emplace(headings, idx);
    return idx;
  };

  std::vector<Chunk> chunks;
  std::map<std::string, size_t> id_seen;
  auto unique_id = [&](std::string id) {
    const size_t n = ++id_seen[id];
    return n > 1 ? id + "~" + std::to_string(n) : id;
  };
  auto section_slug = [](const Section& s) { return s.slug; };

  // Paragraphs (or references) of one section waiting to be packed into a chunk.
  struct Pending {
    std::string text;
    std::vector<std::string> anchors;
    int page = 0;
    bool references = false;
  } pending;
  size_t pending_section = 0;
  auto flush = [&]() {
    if (pending.text.empty()) return;
    Section& s = sections[pending_section];
    const std::string heading_line = joined(s.headings, " / ");
    Chunk c;
    // A reference list is its own type: left out of default searches
    // (pipeline.exclude_chunk_types), found with a type or chunk_type facet.
    c.type = pending.references ? "references" : "text";
    c.chunk_type = pending.references ? "references" : "paragraph";
    c.text = heading_line.empty() ? pending.text : heading_line + "\n" + pending.text;
    c.section = pending_section;
    c.page = pending.page;
    c.anchors = std::move(pending.anchors);
    c.id = unique_id(a.id + "#" + section_slug(s) + ":" + (pending.references ? "r" : "p") + content_hash(c.text));
    if (s.first_text.empty() && !pending.references) s.first_text = pending.text;  // a summary is not made of entries
    if (!s.page) s.page = c.page;
    c.position = s.chunks.size();
    s.chunks.push_back(chunks.size());
    chunks.push_back(std::move(c));
    pending = Pending{};
  };
  auto add_text = [&](size_t section, const Block& b) {
    // An entry, or any paragraph under a References / Bibliography heading (Markdown,
    // HTML, and PDF lists read as paragraphs).
    const bool refs = b.kind == BlockKind::reference ||
                      std::any_of(b.headings.begin(), b.headings.end(), [](const std::string& h) { return is_references_title(h); });
    if (section != pending_section || refs != pending.references) flush();
    pending_section = section;
    const size_t heading = joined(sections[section].headings, " / ").size() + 1;
    const size_t budget = opt.max_chars > heading + 64 ? opt.max_chars - heading : opt.max_chars;
    for (auto& piece : b.text.size() <= budget ? std::vector<std::string>{b.text} : split_text(b.text, budget)) {
      if (!pending.text.empty() && pending.text.size() + 1 + piece.size() > budget) flush();
      pending_section = section;
      pending.references = refs;
      if (pending.text.empty()) pending.page = b.page;
      pending.text += (pending.text.empty() ? "" : "\n") + piece;
      for (const auto& anchor : b.cites)
        if (std::find(pending.anchors.begin(), pending.anchors.end(), anchor) == pending.anchors.end())
          pending.anchors.push_back(anchor);
    }
  };

  for (const auto& b : a.blocks) {
    std::vector<std::string> headings;
    for (const auto& h : b.headings) headings.push_back(collapse_whitespace(h));
    const size_t si = section_index(section_index, headings);
    if (b.kind == BlockKind::paragraph || b.kind == BlockKind::reference) {
      if (!collapse_whitespace(b.text).empty()) add_text(si, b);
      continue;
    }
    flush();  // a table or figure keeps its place between paragraphs
    Chunk c;
    c.section = si;
    c.page = b.page;
    c.source = &b;
    const bool table = b.kind == BlockKind::table;
    c.type = table ? "table" : "figure";
    c.chunk_type = c.type;
    std::string head = b.label;
    if (!b.caption.empty()) head += (head.empty() ? "" : ". ") + b.caption;
    c.text = head.empty() ? b.text : (b.text.empty() ? head : head + "\n" + b.text);
    if (collapse_whitespace(c.text).empty()) continue;
    if (!collapse_whitespace(head).empty() && !collapse_whitespace(b.text).empty()) c.caption = head;
    Section& s = sections[si];
    c.id = unique_id(a.id + "#" + section_slug(s) + ":" + (table ? "t" : "f") + content_hash(c.text));
    if (!s.page) s.page = c.page;
    c.position = s.chunks.size();
    s.chunks.push_back(chunks.size());
    chunks.push_back(std::move(c));
  }
  flush();

  return {std::move(sections), std::move(chunks)};
}

// A section's heading shown for it: the first, or the second under an Abstract.
std::string top_heading(const Section& s) {
  if (s.headings.empty()) return std::string();
  if (s.headings.size() > 1 && ascii_lower(s.headings[0]) == "abstract") return s.headings[1];
  return s.headings[0];
}

// The fields every row of the document shares, for a row `id` of section `s`.
json base_row(const Article& a, const ArticleChunkOptions& opt, const std::string& root, const std::string& id,
              const Section& s) {
  json row = {{"id", id},
              {"document_id", a.id},
              {"source_chunk_id", id},
              {"source_type", a.source_type},
              {"document_name", a.title.empty() ? a.id : a.title},
              {"path", s.headings.empty() ? root : root + "/" + joined([&] {
                 std::vector<std::string> safe;
                 for (const auto& h : s.headings) safe.push_back(safe_segment(h));
                 return safe;
               }(), "/")},
              {"level", static_cast<int64_t>(s.headings.size())}};
  if (!opt.kb_name.empty()) row["kb_name"] = opt.kb_name;
  if (a.year) row["year"] = *a.year;
  if (!a.file_name.empty()) row["file_name"] = a.file_name;
  if (!a.source_uri.empty()) row["source_uri"] = a.source_uri;
  if (!s.headings.empty()) {
    row["section"] = top_heading(s);
    std::string ps = ascii_lower(collapse_whitespace(s.headings[0]));
    std::replace(ps.begin(), ps.end(), ' ', '_');
    row["parent_section"] = ps;
  }
  json meta = {{"format", a.format}};
  if (!a.journal.empty()) meta["journal"] = a.journal;
  if (!a.authors.empty()) meta["authors"] = a.authors;
  if (!a.doi.empty()) meta["doi"] = a.doi;
  if (!a.pmid.empty()) meta["pmid"] = a.pmid;
  if (!a.pmcid.empty()) meta["pmcid"] = a.pmcid;
  row["metadata"] = std::move(meta);
  return row;
}

// One summary per section with text in it or below it (the parent-document
// drill-down's entry point). Children come after their parents: walk backwards.
void add_summaries(const Article& a, const ArticleChunkOptions& opt, const std::string& root,
                   const std::vector<Section>& sections, const std::vector<Chunk>& chunks, std::vector<json>& out) {
  auto base = [&](const std::string& id, const Section& s) { return base_row(a, opt, root, id, s); };
  std::vector<bool> has_text(sections.size(), false);
  // Reference lists do not count: a section of entries alone gets no summary.
  for (size_t k = sections.size(); k-- > 0;) {
    for (size_t c : sections[k].chunks) has_text[k] = has_text[k] || chunks[c].chunk_type != "references";
    if (has_text[k] && sections[k].parent >= 0) has_text[static_cast<size_t>(sections[k].parent)] = true;
  }
  for (size_t si = 0; si < sections.size(); ++si) {
    const Section& s = sections[si];
    if (s.summary_id.empty() || !has_text[si]) continue;
    // The first text of the section, else of its first sub-section that has one.
    std::string first = s.first_text;
    for (size_t k = 0; first.empty() && k < s.subsections.size(); ++k) first = sections[s.subsections[k]].first_text;
    json row = base(s.summary_id, s);
    const std::string summary = truncate_at_word(first, opt.summary_chars);
    // The heading path and the section's start, as the SPL summaries: not the document's
    // title, which would make every top-level summary match a query on the title and
    // crowd the hits with one document's summaries.
    std::string text = joined(s.headings, " / ");
    if (!summary.empty()) text += "\n" + summary;
    std::vector<std::string> subs;
    for (size_t k : s.subsections)
      if (has_text[k]) subs.push_back(sections[k].headings.back());
    if (!subs.empty()) text += "\nSubsections: " + joined(subs, "; ");
    row["text"] = text;
    row["type"] = "section_summary";
    row["chunk_type"] = "section_summary";
    row["content_summary"] = summary;
    // The section's first page, else its first sub-section's (children follow parents).
    int page = s.page;
    for (size_t k = si + 1; !page && k < sections.size(); ++k)
      if (sections[k].headings.size() > s.headings.size() &&
          std::equal(s.headings.begin(), s.headings.end(), sections[k].headings.begin()))
        page = sections[k].page;
    if (page) row["page"] = page;
    json edges = json::array();
    for (size_t k : s.chunks) edges.push_back({{"target", chunks[k].id}, {"relation", "child"}});
    for (size_t k : s.subsections)
      if (has_text[k]) edges.push_back({{"target", sections[k].summary_id}, {"relation", "subsection"}});
    if (s.parent >= 0) edges.push_back({{"target", sections[static_cast<size_t>(s.parent)].summary_id}, {"relation", "parent"}});
    row["connect_to"] = std::move(edges);
    out.push_back(std::move(row));
  }
}

}  // namespace

std::vector<json> chunk_article(const Article& a, const ArticleChunkOptions& opt) {
  if (a.id.empty()) fail(ErrorCode::invalid_argument, "a document without an id cannot be chunked");
  if (opt.max_chars == 0) fail(ErrorCode::invalid_argument, "max_chars must be positive");
  const std::string root = safe_segment(root_segment(a));

  Packed packed = pack_blocks(a, opt);
  std::vector<Section>& sections = packed.sections;  // named: clang 14 cannot capture a structured binding
  std::vector<Chunk>& chunks = packed.chunks;

  // Tables and figures by anchor and by label key, for the "cites" edges.
  std::unordered_map<std::string, size_t> by_anchor, by_label;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const Block* b = chunks[i].source;
    if (!b) continue;
    if (!b->anchor.empty()) by_anchor.emplace(b->anchor, i);
    if (auto key = label_key(b->label, b->kind); !key.empty()) by_label.emplace(key, i);
  }
  for (auto& s : sections)
    if (!s.headings.empty()) s.summary_id = a.id + "#" + s.slug + ":summary";

  auto base = [&](const std::string& id, const Section& s) { return base_row(a, opt, root, id, s); };

  std::vector<json> out;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    const Section& s = sections[c.section];
    json row = base(c.id, s);
    row["text"] = c.text;
    row["type"] = c.type;
    row["chunk_type"] = c.chunk_type;
    if (c.page) row["page"] = c.page;
    if (c.source) {
      row["metadata"]["label"] = c.source->label;
      if (!c.source->anchor.empty()) row["metadata"]["anchor"] = c.source->anchor;
      if (!c.source->graphic.empty()) row["metadata"]["graphic"] = c.source->graphic;
    }
    json edges = json::array();
    std::vector<size_t> cited;
    auto cite = [&](size_t target) {
      if (target == i || std::find(cited.begin(), cited.end(), target) != cited.end()) return;
      cited.push_back(target);
      edges.push_back({{"target", chunks[target].id}, {"relation", "cites"}, {"ref", chunks[target].source->label}});
    };
    if (c.type == "text") {
      for (const auto& anchor : c.anchors)
        if (auto it = by_anchor.find(anchor); it != by_anchor.end()) cite(it->second);
      for (const auto& key : written_citations(c.text))
        if (auto it = by_label.find(key); it != by_label.end()) cite(it->second);
    }
    if (!s.summary_id.empty()) edges.push_back({{"target", s.summary_id}, {"relation", "parent"}});
    if (c.position > 0) edges.push_back({{"target", chunks[s.chunks[c.position - 1]].id}, {"relation", "previous"}});
    if (c.position + 1 < s.chunks.size())
      edges.push_back({{"target", chunks[s.chunks[c.position + 1]].id}, {"relation", "next"}});
    if (!edges.empty()) row["connect_to"] = std::move(edges);
    if (!c.caption.empty()) {
      // The caption as a field of its own (see the header): a row of the caption alone,
      // which the search replaces by its table or figure.
      json caption = base(c.id + ":caption", s);
      caption["text"] = c.caption;
      caption["type"] = "caption";
      caption["chunk_type"] = "caption";
      if (c.page) caption["page"] = c.page;
      caption["metadata"]["label"] = c.source->label;
      caption["connect_to"] = json::array({{{"target", c.id}, {"relation", "caption_of"}}});
      out.push_back(std::move(row));
      out.push_back(std::move(caption));
      continue;
    }
    out.push_back(std::move(row));
  }

  add_summaries(a, opt, root, sections, chunks, out);
  return out;
}

}  // namespace eagle::ingest
