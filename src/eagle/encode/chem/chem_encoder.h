#pragma once
// The `molformer` slot's default: a molecule "encoder" whose vector is the
// Morgan fingerprint (radius 2, 2048 bits) as 0/1 floats and whose metric is
// TANIMOTO, so a flat compound collection answers exact structural similarity.
#include <memory>
#include <string>

#include "eagle/encode/chem/chem.h"
#include "eagle/encode/encoder.h"

namespace eagle::encode {

std::unique_ptr<Encoder> make_chem_encoder(std::string label, chem::FingerprintParams params = {});

// A compound collection schema: TANIMOTO over fingerprints, exact (flat) search,
// plus name / drug-group fields.
CollectionSchema compound_schema(std::string name, const chem::FingerprintParams& params = {},
                                 const std::vector<FieldSchema>& extra = {});

}  // namespace eagle::encode
