#include "eagle/ingest/markdown/markdown.h"

#include <filesystem>
#include <sstream>

#include "eagle/ingest/article/article_chunker.h"
#include "eagle/ingest/text_util.h"

namespace eagle::ingest {

namespace {

// "## Results ##" -> level 2, "Results"; 0 when the line is no ATX heading.
size_t heading(std::string_view line, std::string& title) {
  size_t level = 0;
  while (level < line.size() && line[level] == '#') ++level;
  if (level == 0 || level > 6 || level >= line.size() || line[level] != ' ') return 0;
  std::string t(line.substr(level + 1));
  while (!t.empty() && (t.back() == '#' || t.back() == ' ' || t.back() == '\r')) t.pop_back();
  title = collapse_whitespace(t);
  return title.empty() ? 0 : level;
}

bool is_table_row(std::string_view line) {
  const auto t = trim(line);
  return t.size() > 1 && t.front() == '|';
}

bool is_table_separator(std::string_view line) {
  const auto t = trim(line);
  if (!is_table_row(t)) return false;
  for (char c : t)
    if (c != '|' && c != '-' && c != ':' && c != ' ') return false;
  return t.find('-') != std::string_view::npos;
}

std::string table_row(std::string_view line) {
  auto t = trim(line);
  if (!t.empty() && t.front() == '|') t.remove_prefix(1);
  if (!t.empty() && t.back() == '|') t.remove_suffix(1);
  std::string row;
  size_t start = 0;
  for (size_t i = 0; i <= t.size(); ++i) {
    if (i == t.size() || t[i] == '|') {
      row += (start ? " | " : "") + collapse_whitespace(t.substr(start, i - start));
      start = i + 1;
    }
  }
  return row;
}

}  // namespace

Article read_markdown(std::string_view content, std::string_view source, const std::string& document_id) {
  Article a;
  a.id = document_id;
  a.format = "markdown";
  a.source_type = "";
  a.source_uri = std::string(source);
  a.file_name = std::filesystem::path(std::string(source)).filename().string();
  std::vector<std::string> levels;  // heading path by level (empty slots skipped)
  auto headings = [&]() {
    std::vector<std::string> out;
    for (const auto& h : levels)
      if (!h.empty()) out.push_back(h);
    return out;
  };
  std::vector<std::string> lines;
  {
    std::istringstream in{std::string(content)};
    for (std::string l; std::getline(in, l);) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines.push_back(std::move(l));
    }
  }
  std::string paragraph;
  auto flush = [&]() {
    if (collapse_whitespace(paragraph).empty()) {
      paragraph.clear();
      return;
    }
    Block b;
    b.headings = headings();
    b.text = paragraph;
    while (!b.text.empty() && (b.text.back() == '\n' || b.text.back() == ' ')) b.text.pop_back();
    a.blocks.push_back(std::move(b));
    paragraph.clear();
  };
  bool any_text = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    // A fenced code block stays one paragraph, verbatim; headings inside it are code.
    if (trim(line).rfind("```", 0) == 0) {
      flush();
      std::string code = line + "\n";
      for (++i; i < lines.size(); ++i) {
        code += lines[i] + "\n";
        if (trim(lines[i]).rfind("```", 0) == 0) break;
      }
      paragraph = code;
      flush();
      any_text = true;
      continue;
    }
    std::string title;
    if (const size_t level = heading(line, title)) {
      flush();
      if (level == 1 && a.title.empty() && !any_text && levels.empty()) {
        a.title = title;  // the file's title, not a section
        continue;
      }
      levels.resize(std::min(levels.size(), level - 1));
      while (levels.size() < level - 1) levels.emplace_back();
      levels.push_back(title);
      continue;
    }
    // A pipe table: its header row, the separator, then rows.
    if (is_table_row(line) && i + 1 < lines.size() && is_table_separator(lines[i + 1])) {
      Block b;
      b.kind = BlockKind::table;
      b.headings = headings();
      // A caption in the paragraph just before ("Table 2: ...") belongs to the table.
      const std::string before = collapse_whitespace(paragraph);
      if (split_caption_label(before, BlockKind::table, b.label, b.caption)) paragraph.clear();
      flush();
      std::string rows = table_row(line);
      for (i += 2; i < lines.size() && is_table_row(lines[i]); ++i) rows += "\n" + table_row(lines[i]);
      // ... or on the line after it, unless that caption heads the next table.
      size_t next = i;
      while (next < lines.size() && trim(lines[next]).empty()) ++next;
      const bool heads_next_table = next + 2 < lines.size() && is_table_row(lines[next + 1]) &&
                                    is_table_separator(lines[next + 2]);
      if (b.label.empty() && next < lines.size() && !heads_next_table &&
          split_caption_label(collapse_whitespace(lines[next]), BlockKind::table, b.label, b.caption))
        i = next;
      else
        --i;
      if (b.label.empty()) b.label = "Table";
      b.text = std::move(rows);
      a.blocks.push_back(std::move(b));
      any_text = true;
      continue;
    }
    // An image on its own line: a figure.
    const auto t = trim(line);
    if (t.rfind("![", 0) == 0 && t.back() == ')') {
      const size_t close = t.find("](");
      if (close != std::string_view::npos) {
        flush();
        Block b;
        b.kind = BlockKind::figure;
        b.headings = headings();
        const std::string alt = collapse_whitespace(t.substr(2, close - 2));
        if (!split_caption_label(alt, BlockKind::figure, b.label, b.caption)) {
          b.label = "Figure";
          b.caption = alt;
        }
        b.graphic = std::filesystem::path(std::string(t.substr(close + 2, t.size() - close - 3))).filename().string();
        a.blocks.push_back(std::move(b));
        any_text = true;
        continue;
      }
    }
    if (t.empty()) {
      flush();
      continue;
    }
    // Lines of a paragraph join with a space; list items keep their own lines.
    const bool item = t.front() == '-' || t.front() == '*' || t.front() == '+' ||
                      (std::isdigit(static_cast<unsigned char>(t.front())) && t.find(". ") != std::string_view::npos &&
                       t.find(". ") < 4);
    if (!paragraph.empty()) paragraph += item ? "\n" : " ";
    paragraph += std::string(t);
    any_text = true;
  }
  flush();
  return a;
}

}  // namespace eagle::ingest
