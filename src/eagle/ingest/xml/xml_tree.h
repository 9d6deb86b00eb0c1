#pragma once
// The libxml2 tree as the document readers (JATS, PubMed, HTML) walk it: one parse
// with the network and external entities off, errors as eagle::Error naming the
// source and line, and small helpers that match elements by local name (JATS and
// PubMed files come with and without namespaces).
#include <libxml/tree.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::ingest::xml {

struct DocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
using DocPtr = std::unique_ptr<xmlDoc, DocFree>;

// Parses XML (or HTML with `html`, which is never malformed, only repaired). Throws
// eagle::Error (invalid_argument) naming `source` and the line for malformed XML or
// an empty input.
DocPtr parse(std::string_view bytes, std::string_view source, bool html = false);

// The local name of the root element of an XML text, read from its first bytes
// without parsing the rest ("" when there is none): the format sniff of `--format
// auto` (<document> is SPL, <PubmedArticleSet> PubMed, <article> JATS).
std::string root_element(std::string_view head);

std::string_view local_name(const xmlNode* n);
bool is(const xmlNode* n, std::string_view name);
const xmlNode* child(const xmlNode* n, std::string_view name);
std::vector<const xmlNode*> children(const xmlNode* n, std::string_view name);
// child(child(...)) along local names; null when any step is missing.
const xmlNode* path(const xmlNode* n, std::initializer_list<std::string_view> names);
// The first descendant (pre-order, n excluded) with the local name, or null.
const xmlNode* find(const xmlNode* n, std::string_view name);
// An attribute by local name, any namespace ("" when absent).
std::string attr(const xmlNode* n, std::string_view name);
// All text below n, concatenated as written, whitespace collapsed.
std::string text(const xmlNode* n);
// All text below n with a space between elements (bibliographic records whose parts
// are adjacent elements: <surname>Smith</surname><given-names>J</given-names>).
std::string spaced_text(const xmlNode* n);

}  // namespace eagle::ingest::xml
