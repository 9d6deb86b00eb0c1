// The compound CSV (DrugBank layout) and each card's SMILES through RDKit.
#include <sstream>

#include "eagle/biomed/ingest/compound_cards.h"
#include "eagle/core/error.h"
#include "eagle/encode/chem/chem.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(eagle::fuzz::bytes(data, size));
  try {
    for (const auto& card : eagle::biomed::read_compound_cards(in, "fuzz.csv")) {
      if (card.smiles.size() > 512) continue;
      try {
        eagle::encode::chem::Molecule::from_smiles(card.smiles).morgan();
      } catch (const eagle::Error&) {
      }
    }
  } catch (const eagle::Error&) {
  }
  return 0;
}
