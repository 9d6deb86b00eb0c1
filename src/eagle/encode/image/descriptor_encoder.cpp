#include "eagle/encode/image/descriptor_encoder.h"

#include "eagle/core/error.h"
#include "eagle/ingest/image/descriptor.h"

namespace eagle::encode {
namespace {

class DescriptorEncoder final : public Encoder {
 public:
  DescriptorEncoder(const std::string& label, ingest::ImageLimits limits) : limits_(limits) {
    info_.label = label;
    info_.implementation = "descriptor";
    info_.dim = ingest::kDescriptorDim;
    info_.metric = Metric::ip;
    info_.modality = Modality::image;
    info_.embeds_text = false;
    info_.max_batch = 32;
    info_.identity = ingest::kDescriptorIdentity;
  }
  const EncoderInfo& info() const override { return info_; }

  std::vector<Embedding> encode(const std::vector<std::string>&, EncodeMode) override {
    fail(ErrorCode::invalid_argument, "encoder '" + info_.label +
                                          "' (the dct-lowfreq-v1 image descriptor) embeds images, not text; a text "
                                          "query finds image rows through their captions");
  }

  std::vector<Embedding> encode_images(const std::vector<std::string_view>& images) override {
    std::vector<Embedding> out;
    out.reserve(images.size());
    for (size_t i = 0; i < images.size(); ++i)
      out.push_back(ingest::dct_lowfreq_descriptor(ingest::decode_image(images[i], "image " + std::to_string(i + 1), limits_)));
    return out;
  }

 private:
  EncoderInfo info_;
  ingest::ImageLimits limits_;
};

}  // namespace

std::unique_ptr<Encoder> make_descriptor_encoder(const std::string& label, ingest::ImageLimits limits) {
  return std::make_unique<DescriptorEncoder>(label, limits);
}

}  // namespace eagle::encode
