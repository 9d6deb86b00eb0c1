#include "eagle/ingest/xml/xml_tree.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <climits>
#include <mutex>

#include "eagle/core/error.h"
#include "eagle/ingest/text_util.h"

namespace eagle::ingest::xml {

namespace {

struct CtxtFree {
  void operator()(xmlParserCtxt* c) const { xmlFreeParserCtxt(c); }
};
struct HtmlCtxtFree {
  void operator()(htmlParserCtxt* c) const { htmlFreeParserCtxt(c); }
};

void append_text(const xmlNode* n, std::string& out, bool spaced) {
  for (const xmlNode* c = n->children; c; c = c->next) {
    if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
      if (c->content) out += reinterpret_cast<const char*>(c->content);
    } else if (c->type == XML_ELEMENT_NODE) {
      if (spaced) out += ' ';
      append_text(c, out, spaced);
      if (spaced) out += ' ';
    }
  }
}

}  // namespace

DocPtr parse(std::string_view bytes, std::string_view source_name, bool html) {
  static std::once_flag init;
  std::call_once(init, [] { xmlInitParser(); });
  const std::string source(source_name);
  if (collapse_whitespace(bytes).empty()) fail(ErrorCode::invalid_argument, source + ": empty document");
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    fail(ErrorCode::invalid_argument, source + ": document larger than 2 GiB");
  if (html) {
    std::unique_ptr<htmlParserCtxt, HtmlCtxtFree> ctxt(htmlNewParserCtxt());
    if (!ctxt) fail(ErrorCode::internal, source + ": cannot allocate an HTML parser");
    const int options = HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_RECOVER;
    DocPtr doc(htmlCtxtReadMemory(ctxt.get(), bytes.data(), static_cast<int>(bytes.size()), source.c_str(),
                                  "UTF-8", options));
    if (!doc || !xmlDocGetRootElement(doc.get())) fail(ErrorCode::invalid_argument, source + ": no HTML content");
    return doc;
  }
  std::unique_ptr<xmlParserCtxt, CtxtFree> ctxt(xmlNewParserCtxt());
  if (!ctxt) fail(ErrorCode::internal, source + ": cannot allocate an XML parser");
  // NONET and no entity substitution: a document never needs the network or its DTD.
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  DocPtr doc(xmlCtxtReadMemory(ctxt.get(), bytes.data(), static_cast<int>(bytes.size()), source.c_str(), nullptr,
                               options));
  if (!doc || !ctxt->wellFormed) {
    const xmlError* err = xmlCtxtGetLastError(ctxt.get());
    const std::string msg = err && err->message ? collapse_whitespace(err->message) : "not well-formed";
    fail(ErrorCode::invalid_argument,
         source + ":" + std::to_string(err ? err->line : 0) + ": malformed XML: " + msg);
  }
  return doc;
}

std::string root_element(std::string_view head) {
  size_t i = 0;
  while (i < head.size()) {
    i = head.find('<', i);
    if (i == std::string_view::npos || i + 1 >= head.size()) return "";
    const char c = head[i + 1];
    if (c == '?') {  // <?xml ...?>
      i = head.find("?>", i);
    } else if (head.substr(i, 4) == "<!--") {
      i = head.find("-->", i);
    } else if (c == '!') {  // <!DOCTYPE ...> (an internal subset's brackets included)
      const size_t bracket = head.find('[', i), close = head.find('>', i);
      i = bracket != std::string_view::npos && bracket < close ? head.find("]>", bracket) : close;
    } else {
      size_t end = i + 1;
      while (end < head.size() && head[end] != '>' && head[end] != '/' && head[end] != ' ' && head[end] != '\t' &&
             head[end] != '\r' && head[end] != '\n')
        ++end;
      std::string name(head.substr(i + 1, end - i - 1));
      if (const size_t colon = name.find(':'); colon != std::string::npos) name.erase(0, colon + 1);
      return name;
    }
    if (i == std::string_view::npos) return "";
    ++i;
  }
  return "";
}

std::string_view local_name(const xmlNode* n) {
  return n && n->name ? std::string_view(reinterpret_cast<const char*>(n->name)) : std::string_view();
}

bool is(const xmlNode* n, std::string_view name) {
  return n && n->type == XML_ELEMENT_NODE && local_name(n) == name;
}

const xmlNode* child(const xmlNode* n, std::string_view name) {
  if (!n) return nullptr;
  for (const xmlNode* c = n->children; c; c = c->next)
    if (is(c, name)) return c;
  return nullptr;
}

std::vector<const xmlNode*> children(const xmlNode* n, std::string_view name) {
  std::vector<const xmlNode*> out;
  if (!n) return out;
  for (const xmlNode* c = n->children; c; c = c->next)
    if (is(c, name)) out.push_back(c);
  return out;
}

const xmlNode* path(const xmlNode* n, std::initializer_list<std::string_view> names) {
  for (auto name : names) n = child(n, name);
  return n;
}

const xmlNode* find(const xmlNode* n, std::string_view name) {
  if (!n) return nullptr;
  for (const xmlNode* c = n->children; c; c = c->next) {
    if (is(c, name)) return c;
    if (c->type == XML_ELEMENT_NODE)
      if (const xmlNode* f = find(c, name)) return f;
  }
  return nullptr;
}

std::string attr(const xmlNode* n, std::string_view name) {
  if (!n || n->type != XML_ELEMENT_NODE) return "";
  for (const xmlAttr* a = n->properties; a; a = a->next) {
    if (!a->name || std::string_view(reinterpret_cast<const char*>(a->name)) != name) continue;
    xmlChar* v = xmlNodeGetContent(reinterpret_cast<const xmlNode*>(a));
    std::string out = v ? reinterpret_cast<const char*>(v) : "";
    xmlFree(v);
    return out;
  }
  return "";
}

std::string text(const xmlNode* n) {
  if (!n) return "";
  std::string out;
  append_text(n, out, false);
  return collapse_whitespace(out);
}

std::string spaced_text(const xmlNode* n) {
  if (!n) return "";
  std::string out;
  append_text(n, out, true);
  std::string s = collapse_whitespace(out);
  // The spaces put between elements before punctuation: "Smith J , Jones K ." -> "Smith J, Jones K."
  std::string tidy;
  tidy.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ' && i + 1 < s.size() && (s[i + 1] == ',' || s[i + 1] == '.' || s[i + 1] == ';' || s[i + 1] == ':' ||
                                            s[i + 1] == ')'))
      continue;
    tidy += s[i];
  }
  return tidy;
}

}  // namespace eagle::ingest::xml
