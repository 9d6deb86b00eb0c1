// The vocabulary loaders on arbitrary bytes: NCBI gene TSV, DrugBank CSV, OBO, MeSH
// trees, UMLS MRCONSO.RRF. The first input byte picks the loader; the rest is the file.
#include "eagle/biomed/vocab/vocabulary_loaders.h"
#include "eagle/core/error.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto file = eagle::fuzz::as_file("vocab.txt", data + 1, size - 1);
  eagle::biomed::detail::VocabularyBuilder b;
  try {
    switch (data[0] % 6) {
      case 0: eagle::biomed::detail::load_genes(file, b); break;
      case 1: eagle::biomed::detail::load_drugbank_vocabulary(file, b); break;
      case 2: eagle::biomed::detail::load_drugbank_structures(file, b); break;
      case 3: eagle::biomed::detail::load_obo(file, b); break;
      case 4: eagle::biomed::detail::load_mesh_trees(file, b); break;
      default: eagle::biomed::detail::load_umls(file, std::nullopt, b); break;
    }
  } catch (const eagle::Error&) {
  }
  return 0;
}
