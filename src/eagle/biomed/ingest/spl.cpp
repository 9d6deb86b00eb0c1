#include "eagle/biomed/ingest/spl.h"

#include <cctype>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <climits>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "eagle/biomed/ingest/sections.h"
#include "eagle/ingest/text_util.h"
#include "eagle/core/error.h"

namespace eagle::biomed {

using ingest::ascii_lower;
using ingest::collapse_whitespace;

const LoincSectionMap& LoincSectionMap::defaults() {
  static const LoincSectionMap table = {
      {"34066-1", "boxed_warning"},
      {"34067-9", "indications_and_usage"},
      {"34068-7", "dosage_and_administration"},
      {"34069-5", "how_supplied"},
      {"34070-3", "contraindications"},
      {"34071-1", "warnings"},
      {"34072-9", "general_precautions"},
      {"34073-7", "drug_interactions"},
      {"34074-5", "drug_laboratory_test_interactions"},
      {"34075-2", "laboratory_tests"},
      {"34076-0", "patient_information"},
      {"34077-8", "teratogenic_effects"},
      {"34078-6", "nonteratogenic_effects"},
      {"34079-4", "labor_and_delivery"},
      {"34080-2", "nursing_mothers"},
      {"34081-0", "pediatric_use"},
      {"34082-8", "geriatric_use"},
      {"34083-6", "carcinogenesis_mutagenesis_fertility"},
      {"34084-4", "adverse_reactions"},
      {"34085-1", "controlled_substance"},
      {"34086-9", "abuse"},
      {"34087-7", "dependence"},
      {"34088-5", "overdosage"},
      {"34089-3", "description"},
      {"34090-1", "clinical_pharmacology"},
      {"34091-9", "animal_pharmacology_and_toxicology"},
      {"34092-7", "clinical_studies"},
      {"34093-5", "references"},
      {"38056-8", "supplemental_patient_material"},
      {"42227-9", "drug_abuse_and_dependence"},
      {"42228-7", "pregnancy"},
      {"42229-5", std::string(kSplUnclassified)},
      {"42230-3", "patient_package_insert"},
      {"42231-1", "medication_guide"},
      {"42232-9", "precautions"},
      {"43678-2", "dosage_forms_and_strengths"},
      {"43679-0", "mechanism_of_action"},
      {"43680-8", "nonclinical_toxicology"},
      {"43681-6", "pharmacodynamics"},
      {"43682-4", "pharmacokinetics"},
      {"43683-2", "recent_major_changes"},
      {"43684-0", "use_in_specific_populations"},
      {"43685-7", "warnings_and_precautions"},
      {"44425-7", "storage_and_handling"},
      {"48779-3", "indexing_data"},
      {"48780-1", "product_data"},
      {"49489-8", "microbiology"},
      {"50565-1", "keep_out_of_reach_of_children"},
      {"50566-9", "stop_use"},
      {"50567-7", "when_using"},
      {"50568-5", "ask_doctor_or_pharmacist"},
      {"50569-3", "ask_doctor"},
      {"50570-1", "do_not_use"},
      {"51727-6", "inactive_ingredients"},
      {"51945-4", "package_label"},
      {"53413-1", "questions"},
      {"53414-9", "pregnancy_or_breast_feeding"},
      {"55105-1", "purpose"},
      {"55106-9", "active_ingredient"},
      {"59845-8", "instructions_for_use"},
      {"60561-8", "other_safety_information"},
      {"66106-6", "pharmacogenomics"},
      {"68498-5", "patient_medication_information"},
      {"69718-5", "statement_of_identity"},
  };
  return table;
}

std::string_view LoincSectionMap::find(std::string_view code) const {
  auto it = map_.find(std::string(code));
  return it == map_.end() ? std::string_view() : std::string_view(it->second);
}

std::string SplLabel::display_title() const {
  // Prescription labels open with the Highlights boilerplate ("These highlights do not
  // include all the information needed to use LIPITOR safely ..."): the same words
  // on every label, so the product and its generic name say which label it is.
  std::string lower_title;
  for (char c : title.substr(0, 40)) lower_title += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool boilerplate = lower_title.rfind("these highlights do not include", 0) == 0;
  if (boilerplate && !product_names.empty()) {
    std::string name = product_names.front();
    if (!generic_names.empty()) {
      std::string a, b;
      for (char c : name) a += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (char c : generic_names.front()) b += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (a != b) name += " (" + generic_names.front() + ")";
    }
    return name;
  }
  if (!title.empty()) return title;
  if (!product_names.empty()) return product_names.front();
  if (!generic_names.empty()) return generic_names.front();
  return file_name;
}

int SplLabel::year() const {
  if (effective_time.size() < 4) return 0;
  int y = 0;
  for (size_t i = 0; i < 4; ++i) {
    const char c = effective_time[i];
    if (c < '0' || c > '9') return 0;
    y = y * 10 + (c - '0');
  }
  return y;
}

namespace {

constexpr const char* kHl7Namespace = "urn:hl7-org:v3";

struct DocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
struct CtxtFree {
  void operator()(xmlParserCtxt* c) const { xmlFreeParserCtxt(c); }
};

bool named(const xmlNode* n, const char* name) {
  return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href &&
         xmlStrEqual(n->ns->href, reinterpret_cast<const xmlChar*>(kHl7Namespace)) &&
         xmlStrEqual(n->name, reinterpret_cast<const xmlChar*>(name));
}

const xmlNode* child(const xmlNode* n, const char* name) {
  if (!n) return nullptr;
  for (const xmlNode* c = n->children; c; c = c->next)
    if (named(c, name)) return c;
  return nullptr;
}

// child(child(...)) along a path of element names.
const xmlNode* descend(const xmlNode* n, std::initializer_list<const char*> names) {
  for (const char* name : names) n = child(n, name);
  return n;
}

std::string attr(const xmlNode* n, const char* name) {
  if (!n) return {};
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  if (!v) return {};
  std::string out(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return out;
}

std::string_view local_name(const xmlNode* n) {
  return reinterpret_cast<const char*>(n->name);
}

bool is_text(const xmlNode* n) {
  return n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE;
}

// Elements that start a new line of section text; everything else (content, sup,
// sub, linkHtml, ...) is inline: "<content>W</content>ARNING" must stay one word.
bool is_block(std::string_view name) {
  return name == "paragraph" || name == "list" || name == "item" || name == "caption" || name == "table" ||
         name == "tr" || name == "td" || name == "th" || name == "title" || name == "footnote";
}

// All text under `n` as one string; block boundaries and <br/> become spaces.
void append_inline(const xmlNode* n, std::string& out) {
  for (const xmlNode* c = n->children; c; c = c->next) {
    if (is_text(c)) {
      if (c->content) out += reinterpret_cast<const char*>(c->content);
    } else if (c->type == XML_ELEMENT_NODE) {
      const auto name = local_name(c);
      if (name == "renderMultiMedia") continue;  // an image reference carries no text
      const bool block = name == "br" || is_block(name);
      if (block) out.push_back(' ');
      append_inline(c, out);
      if (block) out.push_back(' ');
    }
  }
}

std::string inline_text(const xmlNode* n) {
  if (!n) return {};
  std::string raw;
  append_inline(n, raw);
  return collapse_whitespace(raw);
}

// Section <text> as lines: one per paragraph, list item, caption and table row
// (cells joined by " | "), each whitespace-collapsed. Lines keep paragraph
// boundaries visible to the chunker, which splits long sections at them.
class SectionTextBuilder {
 public:
  std::string build(const xmlNode* text) {
    if (text) walk(text);
    flush();
    std::string out;
    for (const auto& l : lines_) {
      if (!out.empty()) out.push_back('\n');
      out += l;
    }
    return out;
  }

 private:
  void flush() {
    std::string line = collapse_whitespace(current_);
    current_.clear();
    if (!line.empty()) lines_.push_back(std::move(line));
  }

  void walk(const xmlNode* n) {
    for (const xmlNode* c = n->children; c; c = c->next) {
      if (is_text(c)) {
        if (c->content) current_ += reinterpret_cast<const char*>(c->content);
        continue;
      }
      if (c->type != XML_ELEMENT_NODE) continue;
      const auto name = local_name(c);
      if (name == "renderMultiMedia") continue;
      if (name == "br") {
        flush();
      } else if (name == "table") {
        flush();
        table(c);
      } else if (is_block(name)) {
        flush();
        walk(c);
        flush();
      } else {
        walk(c);
      }
    }
  }

  // Tables are flattened row by row (caption first), in document order across
  // thead / tbody / tfoot.
  void table(const xmlNode* n) {
    for (const xmlNode* c = n->children; c; c = c->next) {
      if (c->type != XML_ELEMENT_NODE) continue;
      const auto name = local_name(c);
      if (name == "caption") {
        current_ = inline_text(c);
        flush();
      } else if (name == "thead" || name == "tbody" || name == "tfoot") {
        table(c);
      } else if (name == "tr") {
        std::string row;
        for (const xmlNode* cell = c->children; cell; cell = cell->next) {
          if (cell->type != XML_ELEMENT_NODE) continue;
          const auto cell_name = local_name(cell);
          if (cell_name != "td" && cell_name != "th") continue;
          std::string t = inline_text(cell);
          if (t.empty()) continue;
          if (!row.empty()) row += " | ";
          row += t;
        }
        current_ = std::move(row);
        flush();
      }
    }
  }

  std::vector<std::string> lines_;
  std::string current_;
};

std::string section_text(const xmlNode* text) {
  return SectionTextBuilder().build(text);
}

// Case-insensitive de-duplication, first spelling kept.
void add_unique(std::vector<std::string>& list, std::string name) {
  if (name.empty()) return;
  const std::string key = ascii_lower(name);
  for (const auto& existing : list)
    if (ascii_lower(existing) == key) return;
  list.push_back(std::move(name));
}

bool is_active_class(const std::string& class_code) {
  return class_code.rfind("ACT", 0) == 0;
}

// The active ingredients of a product entity: [moiety names..., substance name] each.
// Current SPL: ingredient[@classCode=ACTIB|ACTIM|ACTIR]/ingredientSubstance; older SPL:
// activeIngredient/activeIngredientSubstance.
std::vector<std::string> active_ingredient_names(const xmlNode* product) {
  std::vector<std::string> names;
  auto add_substance = [&](const xmlNode* substance) {
    if (!substance) return;
    for (const xmlNode* m = substance->children; m; m = m->next)
      if (named(m, "activeMoiety")) add_unique(names, inline_text(descend(m, {"activeMoiety", "name"})));
    add_unique(names, inline_text(child(substance, "name")));
  };
  for (const xmlNode* c = product->children; c; c = c->next) {
    if (named(c, "ingredient") && is_active_class(attr(c, "classCode")))
      add_substance(child(c, "ingredientSubstance"));
    else if (named(c, "activeIngredient"))
      add_substance(child(c, "activeIngredientSubstance"));
  }
  return names;
}

// A product entity (manufacturedProduct/manufacturedProduct, manufacturedMedicine, or
// a kit part): its proprietary name and generic names. Kit parts count only when
// they carry an active ingredient, so Humira's alcohol swab does not make "isopropyl
// alcohol" a primary drug of the label.
void collect_product(const xmlNode* product, SplLabel& label, bool is_part) {
  const auto actives = active_ingredient_names(product);
  if (is_part && actives.empty()) return;
  add_unique(label.product_names, inline_text(child(product, "name")));
  add_unique(label.generic_names,
             inline_text(descend(product, {"asEntityWithGeneric", "genericMedicine", "name"})));
  for (const auto& a : actives) add_unique(label.generic_names, a);
  for (const xmlNode* c = product->children; c; c = c->next)
    if (named(c, "part")) {
      if (const xmlNode* part = child(c, "partProduct")) collect_product(part, label, true);
    }
}

void find_products(const xmlNode* n, SplLabel& label) {
  for (const xmlNode* c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    // The entity sits inside the role element of the same name.
    const bool entity = (named(c, "manufacturedProduct") && named(n, "manufacturedProduct")) ||
                        named(c, "manufacturedMedicine");
    if (entity) {
      collect_product(c, label, false);
      continue;  // parts are handled by collect_product
    }
    find_products(c, label);
  }
}

// Indexing documents (e.g. pharmacologic class indexing) name a substance instead of
// a product: subject/identifiedSubstance/identifiedSubstance/name.
void find_indexed_substances(const xmlNode* n, SplLabel& label) {
  for (const xmlNode* c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (named(c, "identifiedSubstance") && named(n, "identifiedSubstance")) {
      add_unique(label.generic_names, inline_text(child(c, "name")));
      continue;
    }
    find_indexed_substances(c, label);
  }
}

std::string path_segment(const SplSection& s) {
  std::string seg = !s.title.empty() ? s.title : collapse_whitespace(s.loinc_name);
  if (seg.empty()) seg = "section";
  for (auto& c : seg)
    if (c == '/') c = '-';  // '/' separates path segments
  return seg;
}

std::string resolve_section(const SplSection& s, const std::vector<SplSection>& all,
                            const LoincSectionMap& map) {
  const std::string_view mapped = map.find(s.loinc_code);
  if (!mapped.empty() && mapped != kSplUnclassified) return std::string(mapped);
  if (s.parent >= 0) return all[static_cast<size_t>(s.parent)].biomed_section;
  if (std::string c = canonical_section(s.title); !c.empty()) return c;
  std::string n = normalise_heading(s.title);
  for (auto& c : n)
    if (c == ' ') c = '_';
  if (!n.empty()) return n;
  return std::string(kSplUnclassified);
}

void collect_sections(const xmlNode* container, int parent, size_t depth, SplLabel& label,
                      const LoincSectionMap& map) {
  for (const xmlNode* comp = container->children; comp; comp = comp->next) {
    if (!named(comp, "component")) continue;
    const xmlNode* sec = child(comp, "section");
    if (!sec) continue;
    SplSection s;
    s.index = label.sections.size();
    s.parent = parent;
    s.depth = depth;
    const xmlNode* code = child(sec, "code");
    s.loinc_code = attr(code, "code");
    s.loinc_name = collapse_whitespace(attr(code, "displayName"));
    s.title = inline_text(child(sec, "title"));
    s.text = section_text(child(sec, "text"));
    s.highlight = section_text(descend(sec, {"excerpt", "highlight", "text"}));
    const std::string seg = path_segment(s);
    s.path = parent >= 0 ? label.sections[static_cast<size_t>(parent)].path + "/" + seg : seg;
    s.biomed_section = resolve_section(s, label.sections, map);
    label.sections.push_back(std::move(s));
    collect_sections(sec, static_cast<int>(label.sections.size() - 1), depth + 1, label, map);
  }
}

}  // namespace

SplLabel parse_spl(std::string_view xml, std::string_view source_name, const LoincSectionMap& sections) {
  static std::once_flag init;
  std::call_once(init, [] { xmlInitParser(); });
  const std::string source(source_name);
  if (collapse_whitespace(xml).empty())
    fail(ErrorCode::invalid_argument, source + ": empty document, expected an SPL label (XML)");
  if (xml.size() > static_cast<size_t>(INT_MAX))
    fail(ErrorCode::invalid_argument, source + ": document larger than 2 GiB");

  std::unique_ptr<xmlParserCtxt, CtxtFree> ctxt(xmlNewParserCtxt());
  if (!ctxt) fail(ErrorCode::internal, source + ": cannot allocate an XML parser");
  // NONET and no entity substitution: a label never needs the network or external entities.
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  std::unique_ptr<xmlDoc, DocFree> doc(xmlCtxtReadMemory(ctxt.get(), xml.data(), static_cast<int>(xml.size()),
                                                         source.c_str(), nullptr, options));
  if (!doc || !ctxt->wellFormed) {
    const xmlError* err = xmlCtxtGetLastError(ctxt.get());
    std::string msg = err && err->message ? collapse_whitespace(err->message) : "not well-formed";
    const int line = err ? err->line : 0;
    fail(ErrorCode::invalid_argument, source + ":" + std::to_string(line) + ": malformed XML: " + msg);
  }

  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (!named(root, "document")) {
    std::string what = root ? "<" + std::string(local_name(root)) + ">" : "no root element";
    if (root && root->ns && root->ns->href)
      what += " in namespace " + std::string(reinterpret_cast<const char*>(root->ns->href));
    fail(ErrorCode::invalid_argument,
         source + ": not an SPL document (" + what + "; expected <document> in " + kHl7Namespace + ")");
  }

  SplLabel label;
  label.file_name = ingest::base_name(source);
  label.source_uri = source;
  label.document_id = attr(child(root, "id"), "root");
  if (label.document_id.empty())
    fail(ErrorCode::invalid_argument, source + ": SPL document has no id/@root (needed for chunk ids)");
  label.set_id = attr(child(root, "setId"), "root");
  label.version = attr(child(root, "versionNumber"), "value");
  label.effective_time = attr(child(root, "effectiveTime"), "value");
  label.document_type = collapse_whitespace(attr(child(root, "code"), "displayName"));
  label.title = inline_text(child(root, "title"));

  find_products(root, label);
  if (label.product_names.empty() && label.generic_names.empty()) find_indexed_substances(root, label);

  if (const xmlNode* body = descend(root, {"component", "structuredBody"}))
    collect_sections(body, -1, 0, label, sections);
  return label;
}

SplLabel parse_spl_file(const std::filesystem::path& file, const LoincSectionMap& sections) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "cannot open SPL file " + file.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) fail(ErrorCode::unavailable, "cannot read SPL file " + file.string());
  return parse_spl(buf.str(), file.string(), sections);
}

}  // namespace eagle::biomed
