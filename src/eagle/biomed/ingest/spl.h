#pragma once
// HL7 v3 Structured Product Label (SPL) parsing: the FDA's XML drug
// labels, namespace urn:hl7-org:v3. A label becomes its identifiers, its product and
// generic names (the primary_drugs of every chunk) and a flat, document-ordered list
// of its sections with LOINC codes mapped onto biomed_section names.
#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace eagle::biomed {

// The biomed_section of an unclassified section (LOINC 42229-5). It is a weak
// mapping: such a section inherits its parent's section (see SplSection).
inline constexpr std::string_view kSplUnclassified = "spl_unclassified";

// LOINC section code -> biomed_section name. defaults() is the documented table below;
// callers may copy it and override or add codes (set) before parsing.
//
//   34066-1 boxed_warning               34067-9 indications_and_usage
//   34068-7 dosage_and_administration   34069-5 how_supplied
//   34070-3 contraindications           34071-1 warnings
//   34072-9 general_precautions         34073-7 drug_interactions
//   34074-5 drug_laboratory_test_interactions  34075-2 laboratory_tests
//   34076-0 patient_information         34077-8 teratogenic_effects
//   34079-4 labor_and_delivery          34080-2 nursing_mothers
//   34081-0 pediatric_use               34082-8 geriatric_use
//   34083-6 carcinogenesis_mutagenesis_fertility  34084-4 adverse_reactions
//   34088-5 overdosage                  34089-3 description
//   34090-1 clinical_pharmacology       34092-7 clinical_studies
//   34093-5 references                  42227-9 drug_abuse_and_dependence
//   42228-7 pregnancy                   42229-5 spl_unclassified (weak, see above)
//   42230-3 patient_package_insert      42231-1 medication_guide
//   42232-9 precautions                 43678-2 dosage_forms_and_strengths
//   43679-0 mechanism_of_action         43680-8 nonclinical_toxicology
//   43681-6 pharmacodynamics            43682-4 pharmacokinetics
//   43683-2 recent_major_changes        43684-0 use_in_specific_populations
//   43685-7 warnings_and_precautions    44425-7 storage_and_handling
//   48779-3 indexing_data               48780-1 product_data
//   50565-1 keep_out_of_reach_of_children  50566-9 stop_use
//   50567-7 when_using                  50568-5 ask_doctor_or_pharmacist
//   50569-3 ask_doctor                  50570-1 do_not_use
//   51727-6 inactive_ingredients        51945-4 package_label
//   53413-1 questions                   55105-1 purpose
//   55106-9 active_ingredient           34078-6 nonteratogenic_effects
//   34085-1 controlled_substance        34086-9 abuse
//   34087-7 dependence                  34091-9 animal_pharmacology_and_toxicology
//   38056-8 supplemental_patient_material  49489-8 microbiology
//   53414-9 pregnancy_or_breast_feeding 59845-8 instructions_for_use
//   60561-8 other_safety_information    66106-6 pharmacogenomics
//   68498-5 patient_medication_information  69718-5 statement_of_identity
// (FDA SPL section headings, LOINC OID 2.16.840.1.113883.6.1.)
class LoincSectionMap {
 public:
  LoincSectionMap() = default;
  LoincSectionMap(std::initializer_list<std::pair<const std::string, std::string>> entries) : map_(entries) {}
  static const LoincSectionMap& defaults();

  void set(std::string code, std::string section) { map_[std::move(code)] = std::move(section); }
  // The section for a code, or "" when the code is unknown.
  std::string_view find(std::string_view code) const;
  size_t size() const { return map_.size(); }

 private:
  std::unordered_map<std::string, std::string> map_;
};

// One <section>, nested ones included, in document (pre-)order.
//
// biomed_section is resolved in this order:
//   1. the LOINC code's entry, unless it is unknown or kSplUnclassified;
//   2. the parent section's biomed_section ("5.1 Serious Infections", coded 42229-5
//      under 43685-7, is warnings_and_precautions);
//   3. canonical_section(title) (sections.h), e.g. an uncoded top-level "Warnings";
//   4. normalise_heading(title) with spaces as '_' ("Other information" ->
//      "other_information");
//   5. kSplUnclassified.
struct SplSection {
  size_t index = 0;        // position in SplLabel::sections; chunk ids derive from it
  int parent = -1;         // index of the enclosing section, -1 at the top level
  size_t depth = 0;        // 0 at the top level
  std::string loinc_code;  // code/@code ("" when absent)
  std::string loinc_name;  // code/@displayName
  std::string title;       // whitespace-collapsed; may be empty
  std::string text;        // the section's own <text>: one line per paragraph, list item, table row
  std::string highlight;   // the Highlights excerpt (excerpt/highlight/text), if any
  std::string path;  // ancestor segments joined by '/': "5 WARNINGS AND PRECAUTIONS/5.1 Serious Infections"
  std::string biomed_section;
};

struct SplLabel {
  std::string file_name;                   // base name of the source ("humira.xml")
  std::string source_uri;                  // the path or URI as given to the parser
  std::string document_id;                 // document/id/@root (one version of the label)
  std::string set_id;                      // setId/@root (stable across versions)
  std::string version;                     // versionNumber/@value
  std::string effective_time;              // effectiveTime/@value, "YYYYMMDD..."
  std::string document_type;               // document/code/@displayName ("HUMAN PRESCRIPTION DRUG LABEL")
  std::string title;                       // whitespace-collapsed; empty when the label has none
  std::vector<std::string> product_names;  // proprietary names, de-duplicated, document order
  std::vector<std::string> generic_names;  // generic, active-ingredient and active-moiety names
  std::vector<SplSection> sections;

  // The title, else the first product name, else the first generic name, else the file name.
  std::string display_title() const;
  // The year of effective_time, or 0 when it has none.
  int year() const;
};

// Parses one SPL document. `source_name` names the input in error messages and
// becomes file_name (its base name) and source_uri. Throws eagle::Error
// (invalid_argument) for malformed XML, naming the source and the line; for a
// document that is not SPL (root other than urn:hl7-org:v3 <document>); and for one
// without document/id/@root.
SplLabel parse_spl(std::string_view xml, std::string_view source_name,
                   const LoincSectionMap& sections = LoincSectionMap::defaults());

// Reads and parses a file; a missing or unreadable file is not_found.
SplLabel parse_spl_file(const std::filesystem::path& file,
                        const LoincSectionMap& sections = LoincSectionMap::defaults());

}  // namespace eagle::biomed
