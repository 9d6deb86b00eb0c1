#include "eagle/biomed/ingest/chunker.h"

#include <algorithm>
#include <unordered_map>

#include "eagle/biomed/ingest/sections.h"
#include "eagle/ingest/text_util.h"
#include "eagle/core/error.h"

namespace eagle::biomed {

using ingest::ascii_lower;
using ingest::collapse_whitespace;
using ingest::split_text;
using ingest::trim;
using ingest::truncate_at_word;
using ingest::utf8_prefix;

using nlohmann::json;

namespace {

json year_value(int year) {
  return year > 0 ? json(year) : json(nullptr);
}

json base_row(const std::string& id, std::string text, const std::string& kb_name,
              const std::string& document_id) {
  return json{{"id", id},
              {"text", std::move(text)},
              {"kb_name", kb_name},
              {"document_id", document_id},
              {"source_chunk_id", id},
              {"level", 1},        // a label section's depth + 1; papers' sections are flat
              {"page", nullptr}};  // labels and papers have no pages
}

void add_unique_lower(std::vector<std::string>& list, std::string_view name) {
  std::string n = ascii_lower(collapse_whitespace(name));
  if (n.empty() || std::find(list.begin(), list.end(), n) != list.end()) return;
  list.push_back(std::move(n));
}

}  // namespace

std::vector<std::string> label_primary_drugs(const SplLabel& label) {
  std::vector<std::string> out;
  for (const auto& n : label.product_names) add_unique_lower(out, n);
  for (const auto& n : label.generic_names) add_unique_lower(out, n);
  return out;
}

std::vector<std::string> paper_primary_drugs(const PaperInput& paper, const FindDrugs& find_drugs,
                                             size_t max_drugs) {
  std::vector<std::string> out;
  if (!find_drugs || max_drugs == 0) return out;
  if (!paper.title.empty()) {
    for (const auto& d : find_drugs(paper.title)) {
      if (out.size() >= max_drugs) break;
      add_unique_lower(out, d);
    }
    if (!out.empty()) return out;
  }
  // No drug in the title: the most frequent ones in the text.
  std::vector<std::string> order;                 // first occurrence order
  std::unordered_map<std::string, size_t> count;  // occurrences
  for (const auto& d : find_drugs(paper.text)) {
    std::string n = ascii_lower(collapse_whitespace(d));
    if (n.empty()) continue;
    if (count[n]++ == 0) order.push_back(std::move(n));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string& a, const std::string& b) { return count[a] > count[b]; });
  if (order.size() > max_drugs) order.resize(max_drugs);
  return order;
}

std::vector<json> chunk_label(const SplLabel& label, const ChunkOptions& options) {
  const std::vector<std::string> drugs = label_primary_drugs(label);
  const std::string document_name = label.display_title();
  const json year = year_value(label.year());
  const auto& secs = label.sections;

  auto fill = [&](json& row, const SplSection& top) {
    row["source_type"] = "label";
    row["year"] = year;
    row["parent_section"] = top.biomed_section;
    row["file_name"] = label.file_name;
    row["document_name"] = document_name;
    row["source_uri"] = label.source_uri;
    row["primary_drugs"] = drugs;
    // The label's identity beyond this version (set id, version, effective date).
    row["metadata"] = {{"set_id", label.set_id}, {"version", label.version}, {"effective_time", label.effective_time}};
  };

  std::vector<json> rows;
  // Sections are in pre-order, so a top-level section's subtree is contiguous.
  for (size_t top = 0; top < secs.size();) {
    size_t end = top + 1;
    while (end < secs.size() && secs[end].depth > 0) ++end;
    const SplSection& t = secs[top];

    std::vector<json> chunks;
    for (size_t i = top; i < end; ++i) {
      const SplSection& s = secs[i];
      if (s.text.empty()) continue;
      const std::string base_id = label.document_id + ":s" + std::to_string(s.index);
      const auto pieces = split_text(s.text, options.max_chars);
      for (size_t k = 0; k < pieces.size(); ++k) {
        const std::string id = k == 0 ? base_id : base_id + "#" + std::to_string(k + 1);
        json row = base_row(id, s.title.empty() ? pieces[k] : s.title + "\n" + pieces[k], options.kb_name,
                            label.document_id);
        fill(row, t);
        row["type"] = "text";
        row["path"] = s.path;
        row["level"] = s.depth + 1;
        row["chunk_type"] = "section";
        row["biomed_section"] = s.biomed_section;
        row["content_summary"] = "";
        row["connect_to"] = nullptr;
        chunks.push_back(std::move(row));
      }
    }

    if (!chunks.empty()) {
      // Parent-document retrieval: the summary is recalled, then drilled down to its
      // chunks by path prefix (and one hop along connect_to).
      std::string overview = t.highlight;
      for (size_t i = top; overview.size() < options.summary_chars && i < end; ++i) {
        if (secs[i].text.empty()) continue;
        if (!overview.empty()) overview += ' ';
        overview += secs[i].text;
      }
      for (auto& c : overview)
        if (c == '\n') c = ' ';
      // Highlights often repeat the heading ("WARNING: SERIOUS INFECTIONS ..."): the
      // summary text already starts with it.
      std::string_view rest = overview;
      if (!t.title.empty() && rest.rfind(t.title, 0) == 0) rest = trim(rest.substr(t.title.size()));
      const std::string summary = truncate_at_word(rest, options.summary_chars);
      std::string subsections;
      for (size_t i = top + 1; i < end; ++i) {
        if (secs[i].depth != 1 || secs[i].title.empty()) continue;
        subsections += subsections.empty() ? "Subsections: " : "; ";
        subsections += secs[i].title;
      }
      std::string text = t.title.empty() ? t.loinc_name : t.title;
      for (std::string_view part : {std::string_view(summary), std::string_view(subsections)})
        if (!part.empty()) text += (text.empty() ? "" : "\n") + std::string(part);

      json edges = json::array();
      for (const auto& c : chunks) edges.push_back(c["id"]);
      const std::string id = label.document_id + ":s" + std::to_string(t.index) + ":summary";
      json row = base_row(id, std::move(text), options.kb_name, label.document_id);
      fill(row, t);
      row["type"] = "section_summary";
      row["path"] = t.path;
      row["chunk_type"] = "section_summary";
      row["biomed_section"] = t.biomed_section;
      row["content_summary"] = summary;
      row["connect_to"] = std::move(edges);
      rows.push_back(std::move(row));
      for (auto& c : chunks) rows.push_back(std::move(c));
    }
    top = end;
  }
  return rows;
}

std::vector<json> chunk_paper(const PaperInput& paper, const FindDrugs& find_drugs,
                              const ChunkOptions& options) {
  if (paper.id.empty()) fail(ErrorCode::invalid_argument, "chunk_paper: the paper has no id");
  const std::vector<std::string> drugs = paper_primary_drugs(paper, find_drugs, options.max_paper_drugs);
  const std::string title = collapse_whitespace(paper.title);
  std::vector<SectionSpan> spans = split_paper_sections(paper.text);
  const bool title_only = spans.empty() && !title.empty();
  if (title_only) spans.push_back({"", "", 0, 0, title});  // a record with a title and no text

  std::vector<json> rows;
  for (size_t i = 0; i < spans.size(); ++i) {
    const SectionSpan& span = spans[i];
    const std::string section = span.section.empty() ? paper.default_section : span.section;
    std::string header = title_only ? "" : title;
    if (!span.heading.empty()) header += (header.empty() ? "" : "\n") + span.heading;
    const std::string base_id = paper.id + ":p" + std::to_string(i);
    const auto pieces = split_text(span.text, options.max_chars);
    for (size_t k = 0; k < pieces.size(); ++k) {
      const std::string id = k == 0 ? base_id : base_id + "#" + std::to_string(k + 1);
      std::string text = header.empty() ? pieces[k] : header + "\n" + pieces[k];
      json row = base_row(id, std::move(text), options.kb_name, paper.id);
      row["type"] = "text";
      row["path"] = span.heading.empty() ? section : span.heading;
      row["source_type"] = "paper";
      row["year"] = year_value(paper.year.value_or(0));
      row["chunk_type"] = "section";
      row["parent_section"] = section;
      row["file_name"] = paper.file_name;
      row["document_name"] = title.empty() ? paper.id : title;
      row["source_uri"] = paper.source_uri;
      row["primary_drugs"] = drugs;
      row["metadata"] = json::object();
      row["biomed_section"] = section;
      row["content_summary"] = "";
      row["connect_to"] = nullptr;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace eagle::biomed
