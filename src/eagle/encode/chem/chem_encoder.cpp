#include "eagle/encode/chem/chem_encoder.h"

namespace eagle::encode {
namespace {

class ChemEncoder : public Encoder {
 public:
  ChemEncoder(std::string label, chem::FingerprintParams p) : params_(p) {
    info_.label = std::move(label);
    info_.implementation = "rdkit-morgan";
    info_.dim = p.bits;
    info_.metric = Metric::tanimoto;
    info_.modality = Modality::molecule;
    info_.max_batch = 1024;
  }
  const EncoderInfo& info() const override { return info_; }
  // Inputs are SMILES; an invalid one is an error naming it.
  std::vector<Embedding> encode(const std::vector<std::string>& smiles, EncodeMode) override {
    std::vector<Embedding> out;
    out.reserve(smiles.size());
    for (const auto& s : smiles) {
      auto fp = chem::Molecule::from_smiles(s).morgan(params_);
      Embedding v(params_.bits, 0.0f);
      for (uint32_t b = 0; b < params_.bits; ++b)
        if ((fp.words[b >> 6] >> (b & 63)) & 1) v[b] = 1.0f;
      out.push_back(std::move(v));
    }
    return out;
  }

 private:
  EncoderInfo info_;
  chem::FingerprintParams params_;
};

}  // namespace

std::unique_ptr<Encoder> make_chem_encoder(std::string label, chem::FingerprintParams params) {
  return std::make_unique<ChemEncoder>(std::move(label), params);
}

CollectionSchema compound_schema(std::string name, const chem::FingerprintParams& params,
                                 const std::vector<FieldSchema>& extra) {
  CollectionSchema s;
  s.name = std::move(name);
  s.text_field = "text";  // the compound card: name, synonyms, SMILES
  s.vector.dim = params.bits;
  s.vector.metric = Metric::tanimoto;
  s.vector.index = VectorIndexKind::flat;
  s.fields = {{"name", FieldType::string, true},
              {"smiles", FieldType::string, false},
              {"drug_groups", FieldType::string_list, true},
              {"kb_name", FieldType::string, true},
              {"document_id", FieldType::string, true},
              {"document_name", FieldType::string, false},
              {"source_type", FieldType::string, true}};
  s.fields.insert(s.fields.end(), extra.begin(), extra.end());
  s.validate();
  return s;
}

}  // namespace eagle::encode
