#pragma once
// Reader for the safetensors format (Hugging Face): an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}}, then the tensor bytes.
// The file is memory-mapped; F32, F16 and BF16 tensors are read as float.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace eagle::encode {

struct TensorInfo {
  std::string dtype;  // "F32", "F16", "BF16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range in the data section
  int64_t elements() const;
};

class SafeTensors {
 public:
  // Opens one file, or a sharded model via its "*.safetensors.index.json".
  static SafeTensors open(const std::filesystem::path& path);
  SafeTensors(SafeTensors&&) noexcept;
  SafeTensors& operator=(SafeTensors&&) noexcept;
  ~SafeTensors();

  bool has(const std::string& name) const;
  const TensorInfo& info(const std::string& name) const;  // not_found names the tensor
  // The tensor as float32 (converted from F16/BF16), checked against `shape` when given.
  std::vector<float> read(const std::string& name, const std::vector<int64_t>& shape = {}) const;
  std::vector<std::string> names() const;

 private:
  struct Shard;
  SafeTensors() = default;
  std::vector<Shard*> shards_;
  std::map<std::string, std::pair<size_t, TensorInfo>> tensors_;  // name -> (shard, info)
};

// Writes float32 tensors (tests and tools).
void write_safetensors(const std::filesystem::path& file,
                       const std::vector<std::pair<std::string, std::pair<std::vector<int64_t>, std::vector<float>>>>& tensors);

float half_to_float(uint16_t h);

}  // namespace eagle::encode
