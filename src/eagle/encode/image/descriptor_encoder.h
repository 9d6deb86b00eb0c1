#pragma once
// The embedded image encoder: dct-lowfreq-v1 (ingest/image/descriptor.h) behind the
// Encoder interface, so the visual collection works out of the box, without model
// weights. It embeds images only: a text query reaches its rows through
// their captions and page text (the visual plan's lexical leg).
#include <memory>
#include <string>

#include "eagle/encode/encoder.h"
#include "eagle/ingest/image/image.h"

namespace eagle::encode {

// `label` is what collections and plans call it ("dct-lowfreq", or a visual slot it
// stands in for). Images are decoded within `limits`; a bad one is an error naming
// it by its position in the batch.
std::unique_ptr<Encoder> make_descriptor_encoder(const std::string& label, ingest::ImageLimits limits = {});

}  // namespace eagle::encode
