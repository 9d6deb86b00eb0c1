#include "eagle/ingest/xml/jats.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "eagle/core/error.h"
#include "eagle/ingest/text_util.h"
#include "eagle/ingest/xml/xml_tree.h"

namespace eagle::ingest {

namespace {

using xml::attr;
using xml::child;
using xml::children;
using xml::is;

bool is_float(const xmlNode* n) { return is(n, "table-wrap") || is(n, "fig") || is(n, "table-wrap-group") || is(n, "fig-group"); }

// A float's label and caption (title and paragraphs).
void label_and_caption(const xmlNode* n, Block& b) {
  b.label = xml::text(child(n, "label"));
  // "Table 1." -> "Table 1": the chunk text adds its own separator.
  while (!b.label.empty() && (b.label.back() == '.' || b.label.back() == ':' || b.label.back() == ' ')) b.label.pop_back();
  // The caption's title and paragraphs, each a sentence of its own.
  if (const xmlNode* cap = child(n, "caption"))
    for (const xmlNode* c = cap->children; c; c = c->next)
      if (c->type == XML_ELEMENT_NODE)
        if (std::string t = xml::text(c); !t.empty()) b.caption += (b.caption.empty() ? "" : " ") + t;
  b.anchor = attr(n, "id");
}

std::string table_rows(const xmlNode* table) {
  std::string out;
  auto walk = [&](auto&& self, const xmlNode* n) -> void {
    for (const xmlNode* c = n->children; c; c = c->next) {
      if (is(c, "tr")) {
        std::string row;
        for (const xmlNode* cell = c->children; cell; cell = cell->next) {
          if (!is(cell, "td") && !is(cell, "th")) continue;
          if (!row.empty()) row += " | ";
          row += xml::text(cell);
        }
        if (!collapse_whitespace(row).empty()) out += row + "\n";
      } else if (c->type == XML_ELEMENT_NODE) {
        self(self, c);
      }
    }
  };
  walk(walk, table);
  if (!out.empty()) out.pop_back();
  return out;
}

class JatsReader {
 public:
  explicit JatsReader(Article& a) : a_(a) {}

  void front(const xmlNode* article) {
    const xmlNode* front = child(article, "front");
    const xmlNode* meta = child(front, "article-meta");
    const xmlNode* jmeta = child(front, "journal-meta");
    a_.journal = xml::text(xml::path(jmeta, {"journal-title-group", "journal-title"}));
    if (a_.journal.empty()) a_.journal = xml::text(child(jmeta, "journal-title"));
    a_.title = xml::text(xml::path(meta, {"title-group", "article-title"}));
    for (const xmlNode* id : children(meta, "article-id")) {
      const std::string type = attr(id, "pub-id-type");
      if (type == "doi") a_.doi = xml::text(id);
      else if (type == "pmid") a_.pmid = xml::text(id);
      else if (type == "pmc" || type == "pmcid") a_.pmcid = xml::text(id);
    }
    for (const xmlNode* group : children(meta, "contrib-group"))
      for (const xmlNode* c : children(group, "contrib")) {
        if (const std::string type = attr(c, "contrib-type"); !type.empty() && type != "author") continue;
        if (const xmlNode* name = child(c, "name")) {
          std::string given = xml::text(child(name, "given-names")), surname = xml::text(child(name, "surname"));
          a_.authors.push_back(collapse_whitespace(given + " " + surname));
        } else if (const xmlNode* collab = child(c, "collab")) {
          a_.authors.push_back(xml::text(collab));
        }
      }
    // The publication year: the electronic or print date, else any date given.
    for (const char* want : {"epub", "ppub", "collection", ""}) {
      for (const xmlNode* d : children(meta, "pub-date")) {
        const std::string type = attr(d, "pub-type").empty() ? attr(d, "date-type") : attr(d, "pub-type");
        if (*want && type != want) continue;
        const std::string y = xml::text(child(d, "year"));
        if (y.size() == 4 && std::all_of(y.begin(), y.end(), ::isdigit)) {
          a_.year = std::stoi(y);
          break;
        }
      }
      if (a_.year) break;
    }
    for (const xmlNode* g : children(meta, "kwd-group"))
      for (const xmlNode* k : children(g, "kwd"))
        if (std::string t = xml::text(k); !t.empty()) a_.tags.push_back(std::move(t));
    // Abstracts: the main one under "Abstract" (or its own title), others (an author
    // summary) under their titles; graphical and teaser abstracts have no text worth a chunk.
    for (const xmlNode* ab : children(meta, "abstract")) {
      const std::string type = attr(ab, "abstract-type");
      if (type == "toc" || type == "graphical" || type == "teaser") continue;
      std::string title = xml::text(child(ab, "title"));
      if (title.empty()) title = type.empty() || type == "structured" ? "Abstract" : "Summary";
      section(ab, {title});
    }
  }

  void body(const xmlNode* article) {
    if (const xmlNode* body = child(article, "body")) section(body, {});
    if (const xmlNode* back = child(article, "back")) {
      for (const xmlNode* c = back->children; c; c = c->next) {
        if (is(c, "ack")) {
          std::string t = xml::text(child(c, "title"));
          section(c, {t.empty() ? "Acknowledgments" : t});
        } else if (is(c, "sec") || is(c, "app-group") || is(c, "app")) {
          section(c, {}, true);
        } else if (is(c, "ref-list")) {
          references(c);
        }
      }
    }
    // Floats kept apart (<floats-group>) go after the first paragraph that cites them.
    if (const xmlNode* fg = child(article, "floats-group")) {
      std::vector<const xmlNode*> floats;
      for (const xmlNode* c = fg->children; c; c = c->next)
        if (is_float(c)) floats.push_back(c);
      for (const xmlNode* f : floats) place_float(f);
    }
  }

 private:
  // The blocks of one container (body, sec, abstract, ack); `as_section` makes the
  // container itself a section (its <title> a heading).
  void section(const xmlNode* n, std::vector<std::string> headings, bool as_section = false) {
    if (as_section) {
      std::string t = xml::text(child(n, "title"));
      if (t.empty()) t = xml::text(child(n, "label"));
      headings.push_back(t.empty() ? "Section" : t);
    }
    for (const xmlNode* c = n->children; c; c = c->next) {
      if (c->type != XML_ELEMENT_NODE || is(c, "title") || is(c, "label")) continue;
      if (is(c, "sec") || is(c, "app")) {
        section(c, headings, true);
      } else if (is(c, "ref-list")) {
        references(c);
      } else if (is_float(c)) {
        floating(c, headings);
      } else if (is(c, "p") || is(c, "list") || is(c, "disp-quote") || is(c, "boxed-text") || is(c, "def-list") ||
                 is(c, "statement") || is(c, "preformat")) {
        paragraph(c, headings);
      }
    }
  }

  void paragraph(const xmlNode* p, const std::vector<std::string>& headings) {
    Block b;
    b.headings = headings;
    std::string text;
    std::vector<const xmlNode*> nested;  // floats and lists inside the paragraph
    auto walk = [&](auto&& self, const xmlNode* n) -> void {
      for (const xmlNode* c = n->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
          if (c->content) text += reinterpret_cast<const char*>(c->content);
        } else if (is_float(c)) {
          nested.push_back(c);
        } else if (c->type == XML_ELEMENT_NODE) {
          if (is(c, "xref")) {
            const std::string type = attr(c, "ref-type");
            if (type == "fig" || type == "table") {
              std::istringstream rids(attr(c, "rid"));
              for (std::string rid; rids >> rid;)
                if (std::find(b.cites.begin(), b.cites.end(), rid) == b.cites.end()) b.cites.push_back(rid);
            }
          }
          // List items and paragraphs inside a list or quote start a new line.
          if (is(c, "list-item") || is(c, "p")) text += '\n';
          self(self, c);
        }
      }
    };
    walk(walk, p);
    std::string joined;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (std::string l = collapse_whitespace(line); !l.empty()) joined += (joined.empty() ? "" : "\n") + l;
    b.text = std::move(joined);
    if (!b.text.empty()) a_.blocks.push_back(std::move(b));
    for (const xmlNode* f : nested) floating(f, headings);
  }

  void floating(const xmlNode* n, const std::vector<std::string>& headings) {
    if (is(n, "table-wrap-group") || is(n, "fig-group")) {
      for (const xmlNode* c = n->children; c; c = c->next)
        if (is_float(c)) floating(c, headings);
      return;
    }
    Block b;
    b.headings = headings;
    label_and_caption(n, b);
    if (is(n, "table-wrap")) {
      b.kind = BlockKind::table;
      std::string rows;
      for (const xmlNode* t = n->children; t; t = t->next)
        if (is(t, "table") || is(t, "alternatives")) rows += (rows.empty() ? "" : "\n") + table_rows(t);
      std::string foot = xml::text(child(n, "table-wrap-foot"));
      b.text = rows + (foot.empty() ? "" : (rows.empty() ? "" : "\n") + foot);
      if (b.label.empty()) b.label = "Table";
    } else {
      b.kind = BlockKind::figure;
      if (const xmlNode* g = xml::find(n, "graphic")) b.graphic = attr(g, "href");
      if (b.label.empty()) b.label = "Figure";
    }
    a_.blocks.push_back(std::move(b));
  }

  void references(const xmlNode* list) {
    std::string t = xml::text(child(list, "title"));
    const std::vector<std::string> headings = {t.empty() ? "References" : t};
    for (const xmlNode* r : children(list, "ref")) {
      Block b;
      b.kind = BlockKind::reference;
      b.headings = headings;
      const std::string label = xml::text(child(r, "label"));
      std::string body;
      for (const xmlNode* c = r->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && !is(c, "label")) body += (body.empty() ? "" : " ") + xml::spaced_text(c);
      b.text = collapse_whitespace(label.empty() ? body : label + ". " + body);
      b.anchor = attr(r, "id");
      if (!b.text.empty()) a_.blocks.push_back(std::move(b));
    }
  }

  void place_float(const xmlNode* f) {
    const std::string id = attr(f, "id");
    size_t at = a_.blocks.size();
    std::vector<std::string> headings = {"Figures and tables"};
    for (size_t i = 0; i < a_.blocks.size(); ++i) {
      const auto& b = a_.blocks[i];
      if (b.kind == BlockKind::paragraph && !id.empty() &&
          std::find(b.cites.begin(), b.cites.end(), id) != b.cites.end()) {
        at = i + 1;
        // After the floats already placed behind this paragraph: document order kept.
        while (at < a_.blocks.size() && a_.blocks[at].kind != BlockKind::paragraph &&
               a_.blocks[at].kind != BlockKind::reference && a_.blocks[at].headings == b.headings)
          ++at;
        headings = b.headings;
        break;
      }
    }
    const size_t before = a_.blocks.size();
    floating(f, headings);
    std::rotate(a_.blocks.begin() + static_cast<ptrdiff_t>(at), a_.blocks.begin() + static_cast<ptrdiff_t>(before),
                a_.blocks.end());
  }

  Article& a_;
};

}  // namespace

Article read_jats(std::string_view bytes, std::string_view source, const std::string& document_id) {
  auto doc = xml::parse(bytes, source);
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (!is(root, "article"))
    fail(ErrorCode::invalid_argument, std::string(source) + ": not a JATS article (root <" +
                                          std::string(xml::local_name(root)) + ">, expected <article>)");
  Article a;
  a.id = document_id;
  a.format = "jats";
  a.source_uri = std::string(source);
  a.file_name = std::filesystem::path(std::string(source)).filename().string();
  JatsReader r(a);
  r.front(root);
  r.body(root);
  return a;
}

}  // namespace eagle::ingest
