#include "eagle/biomed/vocab/vocabulary_loaders.h"

#include <algorithm>
#include <fstream>
#include <unordered_set>

#include "eagle/biomed/vocab/normalize.h"
#include "eagle/core/csv.h"
#include "eagle/core/error.h"

namespace eagle::biomed {
namespace fs = std::filesystem;

namespace {

int type_rank(EntityType t) {
  return static_cast<int>(t);
}  // enum order is the precedence

[[noreturn]] void bad_line(const fs::path& file, size_t line, const std::string& what) {
  fail(ErrorCode::invalid_argument, file.string() + ":" + std::to_string(line) + ": " + what);
}

std::ifstream open_source(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "vocabulary file not found or unreadable: " + file.string());
  return in;
}

bool next_line(std::istream& in, std::string& line, size_t& line_no) {
  if (!std::getline(in, line)) return false;
  ++line_no;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

std::vector<std::string_view> split(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, p - start));
    start = p + sep.size();
  }
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

bool compatible(EntityType a, EntityType b) {
  auto drugish = [](EntityType t) { return t == EntityType::drug || t == EntityType::chemical; };
  return a == b || (drugish(a) && drugish(b));
}

void append_unique(std::vector<std::string>& into, const std::vector<std::string>& from) {
  for (const auto& s : from)
    if (std::find(into.begin(), into.end(), s) == into.end()) into.push_back(s);
}

// Seed rule "Drug-suffix regex": only where the source gave no drug/gene/disease type.
EntityType apply_drug_suffix(EntityType t, std::string_view name) {
  if ((t == EntityType::chemical || t == EntityType::other) && has_drug_suffix(name)) return EntityType::drug;
  return t;
}

}  // namespace

bool has_drug_suffix(std::string_view name) {
  static constexpr std::string_view kSuffixes[] = {"mab",   "nib",  "tinib", "rafenib",
                                                   "parib", "stat", "formin"};
  std::string lower;
  for (char c : name) lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c);
  while (!lower.empty() && lower.back() == ' ') lower.pop_back();
  for (auto suffix : kSuffixes) {
    // At least three characters before the suffix: "stat" alone is not a drug.
    if (lower.size() >= suffix.size() + 3 && lower.ends_with(suffix)) return true;
  }
  return false;
}

// UMLS semantic types (TUI) onto the entity kinds. A concept with several types takes
// the first in the order drug > gene > disease > pathway > chemical > other, so
// "Organic Chemical" + "Pharmacologic Substance" is a drug.
EntityType umls_semantic_type(std::string_view tui) {
  struct Row {
    std::string_view tui;
    EntityType type;
  };
  static constexpr Row kTable[] = {
      // drug
      {"T121", EntityType::drug},  // Pharmacologic Substance
      {"T200", EntityType::drug},  // Clinical Drug
      {"T195", EntityType::drug},  // Antibiotic
      // gene (genes and their products)
      {"T028", EntityType::gene},  // Gene or Genome
      {"T116", EntityType::gene},  // Amino Acid, Peptide, or Protein
      {"T126", EntityType::gene},  // Enzyme
      {"T192", EntityType::gene},  // Receptor
      // disease
      {"T047", EntityType::disease},  // Disease or Syndrome
      {"T191", EntityType::disease},  // Neoplastic Process
      {"T046", EntityType::disease},  // Pathologic Function
      {"T048", EntityType::disease},  // Mental or Behavioral Dysfunction
      {"T019", EntityType::disease},  // Congenital Abnormality
      {"T020", EntityType::disease},  // Acquired Abnormality
      {"T190", EntityType::disease},  // Anatomical Abnormality
      {"T037", EntityType::disease},  // Injury or Poisoning
      {"T049", EntityType::disease},  // Cell or Molecular Dysfunction
      {"T050", EntityType::disease},  // Experimental Model of Disease
      {"T184", EntityType::disease},  // Sign or Symptom
      // pathway (biological processes and functions)
      {"T038", EntityType::pathway},  // Biologic Function
      {"T039", EntityType::pathway},  // Physiologic Function
      {"T040", EntityType::pathway},  // Organism Function
      {"T042", EntityType::pathway},  // Organ or Tissue Function
      {"T043", EntityType::pathway},  // Cell Function
      {"T044", EntityType::pathway},  // Molecular Function
      {"T045", EntityType::pathway},  // Genetic Function
      // chemical
      {"T103", EntityType::chemical},  // Chemical
      {"T104", EntityType::chemical},  // Chemical Viewed Structurally
      {"T109", EntityType::chemical},  // Organic Chemical
      {"T114", EntityType::chemical},  // Nucleic Acid, Nucleoside, or Nucleotide
      {"T120", EntityType::chemical},  // Chemical Viewed Functionally
      {"T122", EntityType::chemical},  // Biomedical or Dental Material
      {"T123", EntityType::chemical},  // Biologically Active Substance
      {"T125", EntityType::chemical},  // Hormone
      {"T127", EntityType::chemical},  // Vitamin
      {"T129", EntityType::chemical},  // Immunologic Factor
      {"T130", EntityType::chemical},  // Indicator, Reagent, or Diagnostic Aid
      {"T131", EntityType::chemical},  // Hazardous or Poisonous Substance
      {"T196", EntityType::chemical},  // Element, Ion, or Isotope
      {"T197", EntityType::chemical},  // Inorganic Chemical
  };
  for (const auto& r : kTable)
    if (r.tui == tui) return r.type;
  return EntityType::other;
}

namespace detail {

void clean_aliases(Entity& e) {
  std::unordered_set<std::string> seen{normalize_surface(e.name)};
  std::vector<std::string> kept;
  kept.reserve(e.aliases.size());
  for (auto& a : e.aliases) {
    std::string t = trim(a);
    if (t.empty()) continue;
    if (seen.insert(normalize_surface(t)).second) kept.push_back(std::move(t));
  }
  e.aliases = std::move(kept);
}

Entity* VocabularyBuilder::by_key(const std::string& key) {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &entities[it->second];
}

EntityId VocabularyBuilder::add(Entity e, Source source) {
  if (auto it = keys_.find(e.key); it != keys_.end()) {
    Entity& into = entities[it->second];
    into.aliases.push_back(e.name);
    append_unique(into.aliases, e.aliases);
    clean_aliases(into);
    return it->second;
  }
  std::string norm = normalize_surface(e.name);
  if (auto it = names_.find(norm); it != names_.end()) {
    for (EntityId id : it->second) {
      Entity& into = entities[id];
      if (sources_[id] == source || !compatible(into.type, e.type)) continue;
      append_unique(into.aliases, e.aliases);
      clean_aliases(into);
      if (type_rank(e.type) < type_rank(into.type)) into.type = e.type;  // chemical -> drug
      if (into.smiles.empty()) into.smiles = e.smiles;
      append_unique(into.related_drugs, e.related_drugs);
      append_unique(into.pathways, e.pathways);
      merged_keys.emplace_back(e.key, id);
      keys_.emplace(e.key, id);
      ++stats.merged;
      return id;
    }
  }
  auto id = static_cast<EntityId>(entities.size());
  clean_aliases(e);
  keys_.emplace(e.key, id);
  names_[norm].push_back(id);
  entities.push_back(std::move(e));
  sources_.push_back(source);
  return id;
}

// DrugBank open vocabulary: DrugBank ID, Accession Numbers, Common name, Name, CAS,
// UNII, Synonyms (" | "-separated), Standard InChI Key. RFC 4180 quoting.
void load_drugbank_vocabulary(const fs::path& file, VocabularyBuilder& b) {
  auto in = open_source(file);
  std::vector<std::string> f;
  size_t line = 0;
  if (!read_csv_record(in, f, line)) bad_line(file, 1, "empty file (expected a header)");
  auto col = [&](std::string_view name, bool required) -> int {
    auto it = std::find(f.begin(), f.end(), name);
    if (it == f.end()) {
      if (required) bad_line(file, 1, "header has no '" + std::string(name) + "' column");
      return -1;
    }
    return static_cast<int>(it - f.begin());
  };
  const size_t width = f.size();
  const int id_col = col("DrugBank ID", true), common_col = col("Common name", true);
  const int name_col = col("Name", false), syn_col = col("Synonyms", false);
  for (;;) {
    size_t record_line = line + 1;
    if (!read_csv_record(in, f, line)) break;
    if (f.size() == 1 && f[0].empty()) continue;  // blank line
    if (f.size() != width)
      bad_line(file, record_line,
               "expected " + std::to_string(width) + " fields, got " + std::to_string(f.size()));
    const std::string& id = f[static_cast<size_t>(id_col)];
    if (id.size() < 3 || id.compare(0, 2, "DB") != 0)
      bad_line(file, record_line, "bad DrugBank ID '" + id + "'");
    Entity e;
    e.key = "DRUGBANK:" + id;
    e.name = trim(f[static_cast<size_t>(common_col)]);
    if (e.name.empty()) bad_line(file, record_line, "empty Common name for " + id);
    e.type = EntityType::drug;
    if (syn_col >= 0)
      for (auto s : split(f[static_cast<size_t>(syn_col)], " | ")) e.aliases.emplace_back(s);
    if (name_col >= 0) e.aliases.push_back(f[static_cast<size_t>(name_col)]);
    b.add(std::move(e), Source::drugbank);
    ++b.stats.drugbank_drugs;
  }
}

// DrugBank structures: DrugBank ID, Name, Drug Groups, SMILES.
void load_drugbank_structures(const fs::path& file, VocabularyBuilder& b) {
  auto in = open_source(file);
  std::vector<std::string> f;
  size_t line = 0;
  if (!read_csv_record(in, f, line)) bad_line(file, 1, "empty file (expected a header)");
  auto col = [&](std::string_view name) -> int {
    auto it = std::find(f.begin(), f.end(), name);
    return it == f.end() ? -1 : static_cast<int>(it - f.begin());
  };
  const size_t width = f.size();
  const int id_col = col("DrugBank ID"), smiles_col = col("SMILES"), name_col = col("Name");
  if (id_col < 0 || smiles_col < 0) bad_line(file, 1, "header needs 'DrugBank ID' and 'SMILES' columns");
  for (;;) {
    size_t record_line = line + 1;
    if (!read_csv_record(in, f, line)) break;
    if (f.size() == 1 && f[0].empty()) continue;
    if (f.size() != width)
      bad_line(file, record_line,
               "expected " + std::to_string(width) + " fields, got " + std::to_string(f.size()));
    const std::string& id = f[static_cast<size_t>(id_col)];
    const std::string& smiles = f[static_cast<size_t>(smiles_col)];
    if (id.empty()) bad_line(file, record_line, "empty DrugBank ID");
    ++b.stats.structures;
    if (Entity* e = b.by_key("DRUGBANK:" + id)) {
      e->smiles = smiles;
      continue;
    }
    Entity e;
    e.key = "DRUGBANK:" + id;
    e.name = name_col >= 0 ? trim(f[static_cast<size_t>(name_col)]) : std::string();
    if (e.name.empty()) e.name = id;
    e.type = EntityType::drug;
    e.smiles = smiles;
    b.add(std::move(e), Source::drugbank);
    ++b.stats.structures_added;
  }
}

// NCBI human genes: gene_id, symbol, name, aliases ("|"-separated). The entity's
// name is the symbol; aliases are the other symbols plus the full name.
void load_genes(const fs::path& file, VocabularyBuilder& b) {
  auto in = open_source(file);
  std::string line;
  size_t line_no = 0;
  if (!next_line(in, line, line_no)) bad_line(file, 1, "empty file (expected a header)");
  if (line != "gene_id\tsymbol\tname\taliases")
    bad_line(file, 1, "expected the header 'gene_id<TAB>symbol<TAB>name<TAB>aliases'");
  while (next_line(in, line, line_no)) {
    if (line.empty()) continue;
    auto f = split(line, "\t");
    if (f.size() != 4)
      bad_line(file, line_no, "expected 4 tab-separated fields, got " + std::to_string(f.size()));
    if (f[0].empty() || !std::all_of(f[0].begin(), f[0].end(), [](char c) { return c >= '0' && c <= '9'; }))
      bad_line(file, line_no, "gene_id '" + std::string(f[0]) + "' is not a number");
    Entity e;
    e.key = "NCBIGENE:" + std::string(f[0]);
    e.name = trim(f[1]);
    if (e.name.empty()) bad_line(file, line_no, "empty symbol");
    e.type = EntityType::gene;
    if (!f[3].empty())
      for (auto a : split(f[3], "|")) e.aliases.emplace_back(a);
    if (!f[2].empty()) e.aliases.emplace_back(f[2]);
    b.add(std::move(e), Source::genes);
    ++b.stats.genes;
  }
}

// UMLS MRCONSO.RRF (CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|
// SRL|SUPPRESS|CVF|) and MRSTY.RRF (CUI|TUI|STN|STY|ATUI|CVF|). English rows only;
// suppressible rows (SUPPRESS O, E, Y) are skipped; the preferred name is the first
// row with TS=P, STT=PF, ISPREF=Y, else the first row.
void load_umls(const fs::path& mrconso, const std::optional<fs::path>& mrsty, VocabularyBuilder& b) {
  std::unordered_map<std::string, EntityType> types;
  std::string line;
  if (mrsty) {
    auto in = open_source(*mrsty);
    size_t line_no = 0;
    while (next_line(in, line, line_no)) {
      if (line.empty()) continue;
      auto f = split(line, "|");
      if (f.size() < 4 || f[0].empty() || f[1].empty())
        bad_line(*mrsty, line_no,
                 "expected CUI|TUI|STN|STY|... (got " + std::to_string(f.size()) + " fields)");
      EntityType t = umls_semantic_type(f[1]);
      auto [it, inserted] = types.emplace(std::string(f[0]), t);
      if (!inserted && type_rank(t) < type_rank(it->second)) it->second = t;
    }
  }
  struct Concept {
    std::string cui, preferred;
    std::vector<std::string> names;
  };
  std::vector<Concept> concepts;
  std::unordered_map<std::string, size_t> index;
  auto in = open_source(mrconso);
  size_t line_no = 0;
  while (next_line(in, line, line_no)) {
    if (line.empty()) continue;
    auto f = split(line, "|");
    if (f.size() < 15 || f[0].empty())
      bad_line(mrconso, line_no,
               "expected at least 15 '|'-separated fields, got " + std::to_string(f.size()));
    if (f[1] != "ENG" || (f.size() > 16 && (f[16] == "O" || f[16] == "E" || f[16] == "Y"))) {
      ++b.stats.umls_rows_skipped;
      continue;
    }
    std::string str = trim(f[14]);
    if (str.empty()) bad_line(mrconso, line_no, "empty STR");
    auto [it, inserted] = index.emplace(std::string(f[0]), concepts.size());
    if (inserted) concepts.push_back({std::string(f[0]), {}, {}});
    Concept& c = concepts[it->second];
    if (c.preferred.empty() && f[2] == "P" && f[4] == "PF" && f[6] == "Y") c.preferred = str;
    c.names.push_back(std::move(str));
  }
  for (auto& c : concepts) {
    Entity e;
    e.key = "UMLS:" + c.cui;
    e.name = c.preferred.empty() ? c.names.front() : c.preferred;
    e.aliases = std::move(c.names);
    auto t = types.find(c.cui);
    e.type = apply_drug_suffix(t == types.end() ? EntityType::other : t->second, e.name);
    b.add(std::move(e), Source::umls);
    ++b.stats.umls_concepts;
  }
}

// OBO 1.2 ([Term] stanzas): id, name, synonym "..." EXACT|RELATED (BROAD and NARROW
// name other concepts and are skipped), is_obsolete: true skipped. Every term is a
// disease (the Disease Ontology and its NCIt subset).
void load_obo(const fs::path& file, VocabularyBuilder& b) {
  auto in = open_source(file);
  std::string line;
  size_t line_no = 0, term_line = 0;
  bool in_term = false, obsolete = false;
  Entity e;
  auto flush = [&]() {
    if (!in_term) return;
    in_term = false;
    if (obsolete) {
      ++b.stats.obo_obsolete;
      return;
    }
    if (e.key.empty() || e.name.empty()) bad_line(file, term_line, "[Term] without id or name");
    e.type = EntityType::disease;
    b.add(std::move(e), Source::obo);
    ++b.stats.obo_terms;
  };
  while (next_line(in, line, line_no)) {
    if (!line.empty() && line[0] == '[') {
      flush();
      in_term = line == "[Term]";
      term_line = line_no;
      obsolete = false;
      e = Entity{};
      continue;
    }
    if (!in_term || line.empty() || line[0] == '!') continue;
    size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      // Valid OBO lines are "tag: value"; a lone tag with an empty value is tolerated.
      if (line.back() == ':') continue;
      bad_line(file, line_no, "expected 'tag: value'");
    }
    std::string_view tag(line.data(), colon), value(line.data() + colon + 2, line.size() - colon - 2);
    if (tag == "id") {
      e.key = trim(value);
    } else if (tag == "name") {
      e.name = trim(value);
    } else if (tag == "is_obsolete") {
      obsolete = trim(value) == "true";
    } else if (tag == "synonym") {
      if (value.empty() || value[0] != '"') bad_line(file, line_no, "synonym without a quoted text");
      std::string text;
      size_t i = 1;
      bool closed = false;
      for (; i < value.size(); ++i) {
        char c = value[i];
        if (c == '\\' && i + 1 < value.size()) {
          char n = value[++i];
          text.push_back(n == 'n' ? ' ' : n == 't' ? ' ' : n);
        } else if (c == '"') {
          closed = true;
          ++i;
          break;
        } else {
          text.push_back(c);
        }
      }
      if (!closed) bad_line(file, line_no, "synonym text has no closing quote");
      while (i < value.size() && value[i] == ' ') ++i;
      std::string_view rest = value.substr(i);
      std::string_view scope = rest.substr(0, rest.find(' '));
      if (scope == "EXACT" || scope == "RELATED")
        e.aliases.push_back(std::move(text));
      else if (scope != "BROAD" && scope != "NARROW")
        bad_line(file, line_no,
                 "synonym scope '" + std::string(scope) + "' is not EXACT, RELATED, BROAD or NARROW");
    }
  }
  flush();
}

// MeSH trees ("Name;TreeNumber", one line per tree number; a name's lines are merged).
// C (diseases) -> disease; D (chemicals and drugs) -> chemical, or drug when the
// drug-suffix rule fires; G02/G03 (chemical and metabolic phenomena) -> pathway;
// every other branch is skipped. Key "MESH:<first tree number of the kept branch>";
// an inverted name ("Carcinoma, Non-Small-Cell Lung") also gets its natural order
// ("Non-Small-Cell Lung Carcinoma") as an alias.
void load_mesh_trees(const fs::path& file, VocabularyBuilder& b) {
  auto in = open_source(file);
  struct Term {
    std::string name;
    std::vector<std::string> trees;
  };
  std::vector<Term> terms;
  std::unordered_map<std::string, size_t> index;
  std::string line;
  size_t line_no = 0;
  while (next_line(in, line, line_no)) {
    if (line.empty()) continue;
    size_t semi = line.rfind(';');
    if (semi == std::string::npos || semi == 0) bad_line(file, line_no, "expected 'Name;TreeNumber'");
    std::string name = trim(std::string_view(line).substr(0, semi));
    std::string tree = trim(std::string_view(line).substr(semi + 1));
    bool ok = tree.size() >= 3 && tree[0] >= 'A' && tree[0] <= 'Z';
    for (size_t i = 1; ok && i < tree.size(); ++i) ok = (tree[i] >= '0' && tree[i] <= '9') || tree[i] == '.';
    if (!ok || name.empty()) bad_line(file, line_no, "bad tree number '" + tree + "'");
    auto [it, inserted] = index.emplace(name, terms.size());
    if (inserted) terms.push_back({name, {}});
    terms[it->second].trees.push_back(std::move(tree));
  }
  for (auto& t : terms) {
    const std::string *c = nullptr, *d = nullptr, *g = nullptr;
    for (const auto& tree : t.trees) {
      if (tree[0] == 'C' && !c) c = &tree;
      if (tree[0] == 'D' && !d) d = &tree;
      if ((tree.starts_with("G02") || tree.starts_with("G03")) && !g) g = &tree;
    }
    Entity e;
    const std::string* key_tree = nullptr;
    if (d && has_drug_suffix(t.name)) {
      e.type = EntityType::drug;
      key_tree = d;
    } else if (c) {
      e.type = EntityType::disease;
      key_tree = c;
    } else if (g) {
      e.type = EntityType::pathway;
      key_tree = g;
    } else if (d) {
      e.type = EntityType::chemical;
      key_tree = d;
    } else {
      ++b.stats.mesh_skipped;
      continue;
    }
    e.key = "MESH:" + *key_tree;
    e.name = t.name;
    size_t comma = t.name.find(", ");
    if (comma != std::string::npos && t.name.find(',', comma + 1) == std::string::npos)
      e.aliases.push_back(t.name.substr(comma + 2) + " " + t.name.substr(0, comma));
    b.add(std::move(e), Source::mesh);
    ++b.stats.mesh_terms;
  }
}

}  // namespace detail
}  // namespace eagle::biomed
