#pragma once
// Paper and label section detection (seed: chunker._SECTION_ALIASES). The canonical
// names become each chunk's biomed_section, which the regulatory rerank matches
// against the query's section cues (indications_and_usage / warnings / dosage ...).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace eagle::biomed {

// The canonical section of a heading, or "" when it is not a known heading.
// The heading is normalised first: ASCII case folded, leading numbering ("2.", "5.1",
// "IV.") and Markdown '#' marks dropped, '&' read as "and", punctuation other than
// letters/digits/spaces dropped, trailing ':' ignored. Aliases (seed _SECTION_ALIASES,
// plus the structured-abstract labels of SciFact / PubMed abstracts, filed under the
// NLM category they belong to; the full list is in sections.cpp):
//   background    background, introduction, context, rationale, importance, motivation
//   objective     objective(s), aim(s), purpose, goal(s), hypothesis, purpose of review
//   methods       method(s), materials and methods, patients and methods, study design,
//                 design, methodology, setting, participants, patients, interventions,
//                 main outcome measures, data sources, methods and results, ...
//   results       result(s), findings, main results, recent findings, data synthesis
//   discussion    discussion, comment
//   conclusion    conclusion(s), interpretation, conclusions and relevance, summary,
//                 implications, significance, key points
//   abstract      abstract
//   funding, registration (trial registration)
//   label cues    indications_and_usage (indications and usage, indications, uses),
//                 dosage_and_administration (dosage and administration, dosage, directions),
//                 warnings, precautions, warnings_and_precautions, boxed_warning,
//                 contraindications, adverse_reactions (adverse reactions, side effects),
//                 drug_interactions, overdosage
std::string canonical_section(std::string_view heading);

// The normalised form canonical_section looks up ("5.1 Serious Infections" ->
// "serious infections"); exposed for labels whose section code is unknown.
std::string normalise_heading(std::string_view heading);

// One section of a paper's text. `heading` is the label as written ("METHODS") or
// empty for text before the first heading; `section` its canonical name (may be empty
// when the text has no heading); [begin, end) are byte offsets of the body in the
// input, and `text` the body with its surrounding whitespace trimmed.
struct SectionSpan {
  std::string section;
  std::string heading;
  size_t begin = 0;
  size_t end = 0;
  std::string text;
};

// Splits a paper's text at known headings found at the start of the text, of a line
// or of a sentence:
//   - labels followed by ':' in any case ("BACKGROUND: ...", "Materials and Methods: ...");
//   - upper-case labels without a colon, as BEIR / SciFact flatten structured abstracts
//     ("BACKGROUND Patients ... METHODS 50 patients ..."), when the body does not start
//     in lower case; the longest known label wins ("METHODS AND RESULTS");
//   - heading lines: a whole line that is a known heading (optionally '#'-marked).
// Unknown labels do not split, and "the results: x" inside a sentence stays in its
// span. Empty bodies are dropped; text without any heading is one span with an empty
// section.
std::vector<SectionSpan> split_paper_sections(std::string_view text);

}  // namespace eagle::biomed
