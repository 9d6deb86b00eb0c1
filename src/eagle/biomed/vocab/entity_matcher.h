#pragma once
// The entity matcher: finds vocabulary surfaces in a text in one
// Aho–Corasick pass over its normalised copy (normalize.h), so the cost is linear in
// the text whatever the dictionary size. Matches are leftmost-longest and
// non-overlapping, in text order, with byte offsets into the original text.
//
// Rules applied to every occurrence (before leftmost-longest selection, so a
// rejected long match never hides a valid shorter one):
//   - letter boundary (seed "Letter-boundary UMLS matching", umls._entity_pattern):
//     no letter immediately before or after. EGFR does not fire inside VEGFR, MET
//     not inside "metastatic"; a digit or hyphen is a boundary, so VEGFR matches in
//     "VEGFR1-3", and hyphens and digits inside a name are part of it ("PD-1").
//     Surfaces of at most 3 bytes also need a non-digit neighbour: "CD" is not in
//     "CD34", "NCT" not in "NCT01234567".
//   - case-sensitive surfaces (non-gene acronyms, codes and short symbols, decided at
//     compile time): an all-capitals form ("ALL", "NO") matches only in capitals,
//     any other ("Mg", "SAMe") only exactly as spelled.
//   - gene symbols and symbol-like aliases: in capitals or in the source's own
//     spelling when that is no English word's ("MET", "p53", "c-Myc", "β-catenin")
//     they match; otherwise ("met", "Met") only when
//     followed by a context cue ("met amplification"), and never when 2 bytes long
//     ("in", "of", "to" are gene aliases) or joined by a hyphen to the next word
//     ("pan-cancer", "post-translational"). Gene symbols of at most `short_gene_bytes`
//     need the cue even in capitals ("AR signaling", not "G1 phase"), and so do
//     letters-only aliases (not official symbols) of at most `short_alias_bytes`:
//     "HCC", "ASD", "CAR", "UTR" are gene aliases but mostly something else.
//   - word lists (compared normalised): `stop_words` match only in capitals and
//     `ambiguous_words` in capitals or followed by a cue (any entity type);
//     `context_required` gene surfaces only followed by a cue, even in capitals;
//     `excluded` surfaces never.
// A cue must follow: genes are qualified by the noun after them (MET amplification,
// KIT mutation), while a cue before mostly qualifies something else ("gene set",
// "mutant mice"); `cue_words_before` can widen that.
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "eagle/biomed/vocab/entity.h"
#include "eagle/biomed/vocab/normalize.h"
#include "eagle/biomed/vocab/surface_automaton.h"
#include "eagle/biomed/vocab/vocabulary.h"

namespace eagle::biomed {

struct MatcherOptions {
  // Everyday words that are gene aliases or drug synonyms: matched only in capitals.
  std::vector<std::string> stop_words = {
      "the",     "and",   "for",     "has",    "had",    "was",   "were",   "are",   "not",
      "can",     "may",   "all",     "any",    "but",    "via",   "per",    "out",   "off",
      "one",     "two",   "new",     "old",    "its",    "his",   "her",    "our",   "who",
      "how",     "why",   "did",     "cell",   "cells",  "large", "light",  "same",  "lead",
      "mice",    "rats",  "end",     "age",    "set",    "top",   "step",   "stop",  "spring",
      "wave",    "date",  "balance", "beam",   "bore",   "chalk", "patrol", "perch", "squash",
      "timothy", "titan", "turkey",  "merlin", "orange", "air",   "mat",    "mate"};
  // Gene symbols that are also common words: matched in capitals, or followed by a cue.
  std::vector<std::string> ambiguous_words = {"met", "cat", "impact", "atm", "car", "rest", "ace", "kit",
                                              "ret", "max", "ran",    "bad", "bid", "cap",  "pin", "net"};
  // Clinical abbreviations that are also gene aliases: as genes, matched only followed
  // by a cue (a disease or drug that wins the surface is not affected).
  std::vector<std::string> context_required = {"ct",  "mri", "pcr", "bmi", "icu", "sd",  "se", "ci",  "or",
                                               "hr",  "rr",  "iqr", "fda", "who", "us",  "uk", "usa", "dna",
                                               "rna", "pet", "ecg", "eeg", "ad",  "pd",  "ms", "ca",  "ra",
                                               "cns", "gi",  "im",  "sc",  "po",  "qol", "os", "pfs", "dfs"};
  // Never matched: Roman numerals ("type II", "stage IV") are gene aliases too.
  std::vector<std::string> excluded = {"ii", "iii", "iv", "vi", "vii", "viii", "ix", "xi", "xii"};
  // Words that make a biomedical reading likely; a trailing '*' matches any word with
  // that prefix ("mutat*" = mutation, mutations, mutated).
  std::vector<std::string> context_cues = {
      "gene",          "genes",        "protein*",   "mutat*",      "mutant*",      "amplif*",
      "express*",      "overexpress*", "receptor*",  "kinase*",     "inhibit*",     "exon*",
      "intron*",       "allel*",       "variant*",   "polymorphi*", "transcript*",  "mrna*",
      "phosphorylat*", "signaling",    "signalling", "pathway*",    "knockdown",    "knockout",
      "deletion*",     "fusion*",      "rearrang*",  "locus",       "promoter*",    "methylat*",
      "oncogen*",      "ligand*",      "isoform*",   "upregulat*",  "downregulat*", "genotyp*",
      "germline",      "somatic",      "antibod*",   "enzym*",      "domain*",      "substrate*",
      "activity",      "activation",   "level",      "levels",      "positive",     "negative",
      "status",        "copy",         "loss",       "gain"};
  size_t cue_words_before = 0;   // words before an occurrence searched for a cue
  size_t cue_words_after = 2;    // words after it
  size_t short_gene_bytes = 2;   // gene symbols this short need a cue even in capitals
  size_t short_alias_bytes = 3;  // letters-only gene aliases this short need a cue even in capitals
};

class BruteForceMatcher;

class EntityMatcher {
 public:
  // Shares the vocabulary's compiled dictionary (compiling a private one when the
  // vocabulary has entities added since its last compile()).
  explicit EntityMatcher(const Vocabulary& vocab, MatcherOptions options = {});

  std::vector<EntityMatch> match_entities(std::string_view text) const;
  // Drug entities only (seed match_drug_entities); other types neither match nor
  // hide a drug ("imatinib" inside a longer chemical name is still reported).
  std::vector<EntityMatch> match_drug_entities(std::string_view text) const;

  const MatcherOptions& options() const { return options_; }
  size_t memory_bytes() const;

 private:
  friend class BruteForceMatcher;
  struct Candidate {
    uint32_t start, end, pattern;  // normalised offsets
  };
  std::vector<EntityMatch> match(std::string_view text, bool drugs_only) const;
  // Boundary, drug filter, case and context rules for one occurrence.
  bool accept(std::string_view text, const NormalizedText& nt, size_t start, size_t end, uint32_t pattern,
              bool drugs_only) const;
  bool has_context_cue(const NormalizedText& nt, size_t start, size_t end) const;
  bool is_cue(std::string_view word) const;
  // Leftmost-longest, non-overlapping selection.
  std::vector<EntityMatch> select(std::string_view text, const NormalizedText& nt,
                                  std::vector<Candidate>& candidates) const;

  std::shared_ptr<const SurfaceAutomaton> automaton_;
  MatcherOptions options_;
  // Pattern ids of the option word lists.
  std::unordered_set<uint32_t> stop_, ambiguous_, context_required_, excluded_;
  std::vector<std::string> exact_cues_;  // sorted
  std::vector<std::string> prefix_cues_;
};

// The oracle: every surface searched with std::string::find() over the normalised
// text, then the same rules and selection. Quadratic; for tests and the bench.
class BruteForceMatcher {
 public:
  explicit BruteForceMatcher(const EntityMatcher& matcher);
  std::vector<EntityMatch> match_entities(std::string_view text) const { return match(text, false); }
  std::vector<EntityMatch> match_drug_entities(std::string_view text) const { return match(text, true); }

 private:
  std::vector<EntityMatch> match(std::string_view text, bool drugs_only) const;
  const EntityMatcher& matcher_;
  std::vector<std::string> patterns_;  // by pattern id
};

// [{"text","start","end","type","name","id"}]: id is the entity key, name its
// preferred name, type entity_type_name().
nlohmann::json matches_to_json(const Vocabulary& vocab, const std::vector<EntityMatch>& matches);

}  // namespace eagle::biomed
