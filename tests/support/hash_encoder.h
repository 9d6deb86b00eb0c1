#pragma once
// A deterministic test encoder shared by the pipeline and plugin tests.
#include <cctype>
#include <functional>
#include <string>
#include <vector>

#include "eagle/core/error.h"
#include "eagle/encode/encoder.h"

namespace eagle::test_support {

// Bag-of-words hashed into 32 dims: texts sharing words are close.
class HashEncoder : public encode::Encoder {
 public:
  explicit HashEncoder(std::string label, std::string implementation = "hash") {
    info_.label = std::move(label);
    info_.implementation = std::move(implementation);
    info_.dim = 32;
  }
  const encode::EncoderInfo& info() const override { return info_; }
  std::vector<encode::Embedding> encode(const std::vector<std::string>& in, encode::EncodeMode) override {
    if (fail_) throw eagle::Error(eagle::ErrorCode::unavailable, "encoder offline");
    std::vector<encode::Embedding> out;
    for (const auto& t : in) {
      encode::Embedding v(32, 0.01f);
      std::string w;
      for (char c : t + " ") {
        if (std::isalnum(static_cast<unsigned char>(c))) {
          w += static_cast<char>(std::tolower(c));
        } else if (!w.empty()) {
          v[std::hash<std::string>{}(w) % 32] += 1.0f;
          w.clear();
        }
      }
      out.push_back(v);
    }
    return out;
  }
  bool fail_ = false;

 private:
  encode::EncoderInfo info_;
};

}  // namespace eagle::test_support
