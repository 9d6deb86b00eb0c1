#include "eagle/ingest/xml/html.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "eagle/ingest/article/article_chunker.h"
#include "eagle/ingest/text_util.h"
#include "eagle/ingest/xml/xml_tree.h"

namespace eagle::ingest {

namespace {

using xml::attr;
using xml::is;

bool skipped(const xmlNode* n) {
  for (const char* name : {"script", "style", "nav", "header", "footer", "aside", "noscript", "form", "head", "template"})
    if (is(n, name)) return true;
  return false;
}

int heading_level(const xmlNode* n) {
  const auto name = xml::local_name(n);
  if (n->type == XML_ELEMENT_NODE && name.size() == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6')
    return name[1] - '0';
  return 0;
}

class HtmlReader {
 public:
  explicit HtmlReader(Article& a) : a_(a) {}

  void walk(const xmlNode* n) {
    // Text straight inside a container (<div>text <b>bold</b></div>) is a paragraph of
    // its own, ended by the next block element.
    std::string loose;
    Block loose_cites;
    auto flush_loose = [&]() {
      if (std::string t = collapse_whitespace(loose); !t.empty()) {
        Block b;
        b.headings = headings();
        b.text = std::move(t);
        b.cites = std::move(loose_cites.cites);
        a_.blocks.push_back(std::move(b));
      }
      loose.clear();
      loose_cites.cites.clear();
    };
    for (const xmlNode* c = n->children; c; c = c->next) {
      if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
        if (c->content) loose += reinterpret_cast<const char*>(c->content);
        continue;
      }
      if (c->type != XML_ELEMENT_NODE || skipped(c)) continue;
      if (inline_element(c)) {
        loose += xml::text(c);
        if (is(c, "a")) collect_link(c, loose_cites);
        collect_cites(c, loose_cites);
        continue;
      }
      flush_loose();
      if (const int level = heading_level(c)) {
        std::string t = xml::text(c);
        if (t.empty()) continue;
        if (a_.title.empty() && level == 1) {
          a_.title = t;  // the page's first <h1> is its title, not a section
          continue;
        }
        levels_.resize(std::min(levels_.size(), static_cast<size_t>(level - 1)));
        while (levels_.size() < static_cast<size_t>(level - 1)) levels_.emplace_back("");
        levels_.push_back(std::move(t));
        continue;
      }
      if (is(c, "table")) {
        table(c, xml::text(xml::child(c, "caption")), attr(c, "id"));
      } else if (is(c, "figure")) {
        figure(c);
      } else if (is(c, "p") || is(c, "li") || is(c, "blockquote") || is(c, "pre") || is(c, "dd") || is(c, "dt")) {
        paragraph(c);
      } else {
        walk(c);
      }
    }
    flush_loose();
  }

 private:
  static bool inline_element(const xmlNode* n) {
    for (const char* name : {"a", "span", "em", "strong", "b", "i", "u", "sup", "sub", "code", "small", "abbr",
                             "cite", "q", "mark", "time", "br", "var", "kbd", "s"})
      if (is(n, name)) return true;
    return false;
  }

  // A link to "#id" (a table or figure of the page) is a citation.
  static void collect_link(const xmlNode* a, Block& b) {
    const std::string href = attr(a, "href");
    if (href.size() > 1 && href[0] == '#' && std::find(b.cites.begin(), b.cites.end(), href.substr(1)) == b.cites.end())
      b.cites.push_back(href.substr(1));
  }

  std::vector<std::string> headings() const {
    std::vector<std::string> out;
    for (const auto& h : levels_)
      if (!h.empty()) out.push_back(h);
    return out;
  }

  static void collect_cites(const xmlNode* n, Block& b) {
    for (const xmlNode* c = n->children; c; c = c->next) {
      if (c->type != XML_ELEMENT_NODE) continue;
      if (is(c, "a")) collect_link(c, b);
      collect_cites(c, b);
    }
  }

  void paragraph(const xmlNode* n) {
    Block b;
    b.headings = headings();
    b.text = xml::text(n);
    collect_cites(n, b);
    if (b.text.empty()) return;
    a_.blocks.push_back(std::move(b));
    // A table or figure nested in a list item or paragraph still becomes its own block.
    for (const xmlNode* c = n->children; c; c = c->next) {
      if (is(c, "table")) table(c, xml::text(xml::child(c, "caption")), attr(c, "id"));
      if (is(c, "figure")) figure(c);
    }
  }

  void table(const xmlNode* t, std::string caption, std::string anchor) {
    Block b;
    b.kind = BlockKind::table;
    b.headings = headings();
    b.anchor = std::move(anchor);
    label_and_caption(caption, BlockKind::table, b);
    std::string rows;
    auto rows_of = [&](auto&& self, const xmlNode* n) -> void {
      for (const xmlNode* c = n->children; c; c = c->next) {
        if (is(c, "tr")) {
          std::string row;
          for (const xmlNode* cell = c->children; cell; cell = cell->next)
            if (is(cell, "td") || is(cell, "th")) row += (row.empty() ? "" : " | ") + xml::text(cell);
          if (!collapse_whitespace(row).empty()) rows += (rows.empty() ? "" : "\n") + row;
        } else if (c->type == XML_ELEMENT_NODE && !is(c, "caption")) {
          self(self, c);
        }
      }
    };
    rows_of(rows_of, t);
    b.text = std::move(rows);
    a_.blocks.push_back(std::move(b));
  }

  void figure(const xmlNode* f) {
    const std::string caption = xml::text(xml::child(f, "figcaption"));
    if (const xmlNode* t = xml::find(f, "table")) {
      table(t, caption, attr(f, "id").empty() ? attr(t, "id") : attr(f, "id"));
      return;
    }
    Block b;
    b.kind = BlockKind::figure;
    b.headings = headings();
    b.anchor = attr(f, "id");
    label_and_caption(caption, BlockKind::figure, b);
    if (const xmlNode* img = xml::find(f, "img"))
      b.graphic = std::filesystem::path(attr(img, "src")).filename().string();
    a_.blocks.push_back(std::move(b));
  }

  // "Table 2. Baseline ..." -> label "Table 2", caption "Baseline ..." (the chunk puts
  // the label back in front); a caption without one keeps the kind word as label.
  static void label_and_caption(const std::string& text, BlockKind kind, Block& b) {
    if (!split_caption_label(text, kind, b.label, b.caption)) {
      b.label = kind == BlockKind::table ? "Table" : "Figure";
      b.caption = text;
    }
  }

  Article& a_;
  std::vector<std::string> levels_;
};

}  // namespace

Article read_html(std::string_view bytes, std::string_view source, const std::string& document_id) {
  auto doc = xml::parse(bytes, source, /*html=*/true);
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  Article a;
  a.id = document_id;
  a.format = "html";
  a.source_type = "web";
  a.source_uri = std::string(source);
  a.file_name = std::filesystem::path(std::string(source)).filename().string();
  HtmlReader r(a);
  const xmlNode* body = xml::child(root, "body");
  r.walk(body ? body : root);
  // The page's <title> names it when no <h1> did (an <h1> title is not in any chunk).
  if (const std::string t = xml::text(xml::path(root, {"head", "title"})); !t.empty() && a.title.empty()) a.title = t;
  return a;
}

}  // namespace eagle::ingest
