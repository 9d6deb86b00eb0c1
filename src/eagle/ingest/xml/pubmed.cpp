#include "eagle/ingest/xml/pubmed.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "eagle/core/error.h"
#include "eagle/ingest/text_util.h"
#include "eagle/ingest/xml/xml_tree.h"

namespace eagle::ingest {

namespace {

using xml::attr;
using xml::child;
using xml::children;

std::optional<int> year_in(const std::string& s) {
  for (size_t i = 0; i + 4 <= s.size(); ++i)
    if (std::all_of(s.begin() + static_cast<ptrdiff_t>(i), s.begin() + static_cast<ptrdiff_t>(i + 4), ::isdigit))
      return std::stoi(s.substr(i, 4));
  return std::nullopt;
}

// "BACKGROUND" -> "Background": PubMed's structured-abstract labels are often upper case.
std::string heading_case(std::string s) {
  if (std::any_of(s.begin(), s.end(), ::islower)) return s;
  bool start = true;
  for (char& c : s) {
    c = start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
              : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    start = c == ' ' || c == '-' || c == '/';
  }
  return s;
}

Article read_article(const xmlNode* pa, std::string_view source) {
  const xmlNode* mc = child(pa, "MedlineCitation");
  const xmlNode* art = child(mc, "Article");
  Article a;
  a.format = "pubmed";
  a.source_type = "abstract";
  a.pmid = xml::text(child(mc, "PMID"));
  if (a.pmid.empty()) fail(ErrorCode::invalid_argument, std::string(source) + ": a PubmedArticle without a PMID");
  a.id = a.pmid;
  a.title = xml::text(child(art, "ArticleTitle"));
  if (a.title.empty()) a.title = xml::text(child(art, "VernacularTitle"));
  const xmlNode* journal = child(art, "Journal");
  a.journal = xml::text(child(journal, "Title"));
  const xmlNode* date = xml::path(journal, {"JournalIssue", "PubDate"});
  if (const xmlNode* y = child(date, "Year")) a.year = year_in(xml::text(y));
  if (!a.year) a.year = year_in(xml::text(child(date, "MedlineDate")));
  if (!a.year) a.year = year_in(xml::text(xml::path(art, {"ArticleDate", "Year"})));
  for (const xmlNode* e : children(art, "ELocationID"))
    if (attr(e, "EIdType") == "doi") a.doi = xml::text(e);
  for (const xmlNode* id : children(xml::path(pa, {"PubmedData", "ArticleIdList"}), "ArticleId")) {
    const std::string type = attr(id, "IdType");
    if (type == "doi" && a.doi.empty()) a.doi = xml::text(id);
    if (type == "pmc") a.pmcid = xml::text(id);
  }
  for (const xmlNode* au : children(child(art, "AuthorList"), "Author")) {
    if (const xmlNode* c = child(au, "CollectiveName")) {
      a.authors.push_back(xml::text(c));
      continue;
    }
    std::string name = collapse_whitespace(xml::text(child(au, "ForeName")) + " " + xml::text(child(au, "LastName")));
    if (!name.empty()) a.authors.push_back(std::move(name));
  }
  for (const xmlNode* h : children(child(mc, "MeshHeadingList"), "MeshHeading"))
    if (std::string d = xml::text(child(h, "DescriptorName")); !d.empty()) a.tags.push_back(std::move(d));
  for (const xmlNode* kl : children(mc, "KeywordList"))
    for (const xmlNode* k : children(kl, "Keyword"))
      if (std::string t = xml::text(k); !t.empty() && std::find(a.tags.begin(), a.tags.end(), t) == a.tags.end())
        a.tags.push_back(std::move(t));
  for (const xmlNode* t : children(child(art, "Abstract"), "AbstractText")) {
    Block b;
    b.headings = {"Abstract"};
    if (std::string label = attr(t, "Label"); !label.empty()) b.headings.push_back(heading_case(label));
    b.text = xml::text(t);
    if (!b.text.empty()) a.blocks.push_back(std::move(b));
  }
  // An article without an abstract is still a document: its title is its text.
  if (a.blocks.empty() && !a.title.empty()) {
    Block b;
    b.text = a.title;
    a.blocks.push_back(std::move(b));
  }
  return a;
}

}  // namespace

std::vector<Article> read_pubmed(std::string_view bytes, std::string_view source) {
  auto doc = xml::parse(bytes, source);
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (!xml::is(root, "PubmedArticleSet"))
    fail(ErrorCode::invalid_argument, std::string(source) + ": not PubMed XML (root <" +
                                          std::string(xml::local_name(root)) + ">, expected <PubmedArticleSet>)");
  std::vector<Article> out;
  const std::string file_name = std::filesystem::path(std::string(source)).filename().string();
  for (const xmlNode* pa : children(root, "PubmedArticle")) {
    out.push_back(read_article(pa, source));
    out.back().file_name = file_name;
    out.back().source_uri = std::string(source);
  }
  return out;
}

}  // namespace eagle::ingest
