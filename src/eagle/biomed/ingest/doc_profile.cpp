#include "eagle/biomed/ingest/doc_profile.h"

#include <algorithm>
#include <string>
#include <unordered_set>

namespace eagle::biomed {

std::string_view document_profile_name(DocumentProfile p) {
  return p == DocumentProfile::biomedical ? "biomedical" : "general";
}

namespace {

const std::unordered_set<std::string_view>& cue_words() {
  static const std::unordered_set<std::string_view> words = {
      // clinical
      "patient", "patients", "clinical", "clinically", "trial", "trials", "randomized", "randomised",
      "placebo", "cohort", "cohorts", "efficacy", "dose", "doses", "dosage", "dosing", "mg", "kg", "ml",
      "mmol", "therapy", "therapies", "therapeutic", "treatment", "treatments", "treated", "diagnosis",
      "diagnostic", "prognosis", "prognostic", "disease", "diseases", "disorder", "disorders", "syndrome",
      "symptom", "symptoms", "chronic", "acute", "mortality", "morbidity", "survival", "adverse", "toxicity",
      "infection", "infections", "infectious", "inflammation", "inflammatory", "cancer", "cancers", "tumor",
      "tumors", "tumour", "tumours", "malignant", "metastasis", "metastatic", "diabetes", "diabetic",
      "hypertension", "cardiovascular", "cardiac", "renal", "hepatic", "pulmonary", "neuronal", "neurons",
      "clinicians", "physicians", "hospital", "hospitalized", "surgery", "surgical", "pediatric",
      "paediatric", "pregnancy", "pregnant", "vaccine", "vaccines", "vaccination", "immune", "immunity",
      "antibody", "antibodies", "antigen", "drug", "drugs", "pharmacokinetics", "pharmacological",
      "inhibitor", "inhibitors", "inhibition", "agonist", "antagonist", "contraindicated",
      "contraindications", "epidemiological", "incidence", "prevalence", "biopsy", "plasma", "serum", "blood",
      "insulin",
      // molecular and cell biology
      "cell", "cells", "cellular", "protein", "proteins", "gene", "genes", "genetic", "genome", "genomic",
      "mutation", "mutations", "mutant", "expression", "expressed", "receptor", "receptors", "enzyme",
      "enzymes", "kinase", "pathway", "pathways", "mrna", "dna", "rna", "mirna", "transcription",
      "phosphorylation", "signaling", "signalling", "mice", "mouse", "murine", "rats", "vivo", "vitro",
      "knockout", "transgenic", "apoptosis", "tissue", "tissues", "bacteria", "bacterial", "viral", "virus",
      "pathogen", "pathogens", "metabolic", "metabolism", "molecular", "ligand", "peptide", "peptides",
      "lymphocytes", "macrophages", "cytokine", "cytokines", "stem", "embryonic", "chromosome", "allele",
      "alleles", "phenotype", "genotype", "biomarker", "biomarkers", "histone", "histones", "chromatin",
      "nucleosome", "promoter", "methylation", "acetylation", "yeast", "mitochondria", "mitochondrial",
      "membrane", "membranes", "lipid", "lipids", "organelles", "cytoplasm", "cytoplasmic", "endoplasmic",
      "actin", "microtubules", "biological", "biochemical", "biology", "sequencing", "microrna", "micrornas",
      "mirnas", "vesicles", "extracellular", "intracellular", "secretion", "hormone", "hormones", "steroid",
      "cholesterol", "glucose", "vitamin", "metabolite", "metabolites", "amino", "mammalian", "zebrafish",
      "drosophila", "elegans", "vertebrates", "evolutionary", "genetics", "heritability", "transcriptional",
      "embryo", "embryos", "fetal", "sperm", "ovarian", "fertility", "neonatal", "infant", "infants",
      "maternal", "postpartum", "gestational", "obstetric",
      // anatomy and clinical practice
      "brain", "cerebral", "cortex", "cortical", "neural", "neuronal", "heart", "liver", "kidney", "lung",
      "lungs", "skin", "bone", "muscle", "arterial", "artery", "arteries", "vascular", "retina", "retinal",
      "medical", "medicine", "medication", "medications", "physician", "clinic", "clinics", "outpatient",
      "outpatients", "inpatient", "hospitalization", "hospitalisation", "comorbidity", "comorbidities",
      "healthcare", "nursing", "epidemiology", "epidemic", "pandemic", "hiv", "aids", "malaria",
      "tuberculosis", "influenza", "asthma", "obesity", "epilepsy", "dementia", "alzheimer", "stroke", "mri",
      "pathology", "pathological", "oncology", "chemotherapy", "radiotherapy", "immunotherapy", "neoplasm",
      "lesions", "lesion", "mosquito", "mosquitoes", "parasite", "parasites", "antiretroviral", "antibiotic",
      "antibiotics", "bmi", "pharmacy", "prescription", "prescribed", "diagnosed", "etiology", "aetiology",
      "pathophysiology", "pathogenesis", "physiological", "physiology", "neurological", "psychiatric",
      "cognitive", "sensory", "motor"};
  return words;
}

// Word endings of drug and disease names (INN stems, pathology suffixes). A minimum
// stem length keeps short everyday words ("coma", "aroma") out.
bool has_cue_suffix(std::string_view w) {
  struct Suffix {
    std::string_view s;
    size_t min_len;
  };
  static constexpr Suffix kSuffixes[] = {
      {"itis", 6},    {"aemia", 7},     {"emia", 6},    {"oma", 6},    {"osis", 7},     {"pathy", 7},
      {"ectomy", 8},  {"plasia", 8},    {"cytes", 7},   {"uria", 6},   {"algia", 7},    {"mab", 7},
      {"tinib", 7},   {"statin", 8},    {"mycin", 7},   {"cillin", 8}, {"prazole", 9},  {"olol", 7},
      {"sartan", 8},  {"pril", 7},      {"vudine", 8},  {"platin", 8}, {"taxel", 7},    {"kinase", 7},
      {"kinases", 8}, {"genesis", 10},  {"somes", 8},   {"virus", 7},  {"viruses", 8},  {"azole", 7},
      {"amine", 7},   {"scopy", 8},     {"therapy", 9}, {"penia", 7},  {"genic", 8},    {"ocyte", 7},
      {"ocytes", 8},  {"ectomies", 10}, {"otomy", 7},   {"emic", 7},   {"cellular", 10}};
  static const std::unordered_set<std::string_view> kNotCues = {"diploma", "diplomas", "aromas", "examine",
                                                                "photogenic"};
  if (kNotCues.count(w)) return false;
  for (const auto& x : kSuffixes)
    if (w.size() >= x.min_len && w.substr(w.size() - x.s.size()) == x.s) return true;
  return false;
}

}  // namespace

ProfileDecision classify_document_profile(std::string_view text, const CountEntities& count_entities,
                                          const ProfileOptions& options) {
  ProfileDecision d;
  std::string word;
  auto end_word = [&] {
    if (word.empty()) return;
    ++d.tokens;
    if (cue_words().count(word) || has_cue_suffix(word)) ++d.cue_words;
    word.clear();
  };
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80)
      word.push_back(ch);
    else if (c >= 'A' && c <= 'Z')
      word.push_back(static_cast<char>(c - 'A' + 'a'));
    else
      end_word();
  }
  end_word();
  if (count_entities) d.entities = count_entities(text);
  if (d.tokens > 0)
    d.density =
        static_cast<double>(std::max(d.cue_words, d.entities)) * 100.0 / static_cast<double>(d.tokens);
  d.profile = d.tokens >= options.min_tokens && d.density >= options.min_density ? DocumentProfile::biomedical
                                                                                 : DocumentProfile::general;
  return d;
}

}  // namespace eagle::biomed
