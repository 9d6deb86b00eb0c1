#include "eagle/encode/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "eagle/core/error.h"

namespace eagle::encode {
namespace fs = std::filesystem;
using nlohmann::json;

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

struct SafeTensors::Shard {
  fs::path path;
  const uint8_t* map = nullptr;
  size_t size = 0;
  size_t data_start = 0;
  ~Shard() {
    if (map) munmap(const_cast<uint8_t*>(map), size);
  }
};

SafeTensors::SafeTensors(SafeTensors&& o) noexcept : shards_(std::move(o.shards_)), tensors_(std::move(o.tensors_)) {
  o.shards_.clear();
}
SafeTensors& SafeTensors::operator=(SafeTensors&& o) noexcept {
  std::swap(shards_, o.shards_);
  std::swap(tensors_, o.tensors_);
  return *this;
}
SafeTensors::~SafeTensors() {
  for (auto* s : shards_) delete s;
}

SafeTensors SafeTensors::open(const fs::path& path) {
  SafeTensors st;
  std::vector<fs::path> files;
  if (path.string().size() > 11 && path.extension() == ".json") {
    std::ifstream in(path);
    if (!in) fail(ErrorCode::not_found, "cannot read " + path.string());
    json idx;
    try {
      idx = json::parse(in);
    } catch (const json::exception& e) {
      fail(ErrorCode::invalid_argument, path.string() + ": " + e.what());
    }
    std::set<std::string> uniq;
    for (const auto& [name, file] : idx.at("weight_map").items()) uniq.insert(file.get<std::string>());
    for (const auto& f : uniq) files.push_back(path.parent_path() / f);
  } else {
    files.push_back(path);
  }
  for (const auto& file : files) {
    auto* shard = new Shard;
    st.shards_.push_back(shard);
    shard->path = file;
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(ErrorCode::not_found, "cannot open " + file.string());
    struct stat sb;
    fstat(fd, &sb);
    shard->size = static_cast<size_t>(sb.st_size);
    if (shard->size < 8) {
      ::close(fd);
      fail(ErrorCode::invalid_argument, file.string() + ": too small for safetensors");
    }
    void* m = mmap(nullptr, shard->size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) fail(ErrorCode::unavailable, "cannot map " + file.string());
    shard->map = static_cast<const uint8_t*>(m);
    uint64_t header_len;
    std::memcpy(&header_len, shard->map, 8);
    if (header_len > shard->size - 8) fail(ErrorCode::invalid_argument, file.string() + ": corrupt header length");
    shard->data_start = 8 + header_len;
    json header;
    try {
      header = json::parse(std::string(reinterpret_cast<const char*>(shard->map + 8), header_len));
    } catch (const json::exception& e) {
      fail(ErrorCode::invalid_argument, file.string() + ": bad header: " + e.what());
    }
    const size_t data_size = shard->size - shard->data_start;
    if (!header.is_object()) fail(ErrorCode::invalid_argument, file.string() + ": the header is not a JSON object");
    for (const auto& [name, t] : header.items()) {
      if (name == "__metadata__") continue;
      TensorInfo ti;
      std::vector<uint64_t> off;
      try {
        ti.dtype = t.at("dtype").get<std::string>();
        ti.shape = t.at("shape").get<std::vector<int64_t>>();
        off = t.at("data_offsets").get<std::vector<uint64_t>>();
      } catch (const json::exception& e) {
        fail(ErrorCode::invalid_argument, file.string() + ": tensor '" + name + "': " + e.what());
      }
      if (off.size() != 2 || off[0] > off[1] || off[1] > data_size)
        fail(ErrorCode::invalid_argument, file.string() + ": tensor '" + name + "' has bad offsets");
      ti.begin = off[0];
      ti.end = off[1];
      st.tensors_[name] = {st.shards_.size() - 1, ti};
    }
  }
  return st;
}

bool SafeTensors::has(const std::string& name) const { return tensors_.count(name) > 0; }

const TensorInfo& SafeTensors::info(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) fail(ErrorCode::not_found, "tensor '" + name + "' is not in the model");
  return it->second.second;
}

std::vector<std::string> SafeTensors::names() const {
  std::vector<std::string> out;
  for (const auto& [n, v] : tensors_) out.push_back(n);
  return out;
}

std::vector<float> SafeTensors::read(const std::string& name, const std::vector<int64_t>& shape) const {
  const auto& entry = tensors_.find(name);
  if (entry == tensors_.end()) fail(ErrorCode::not_found, "tensor '" + name + "' is not in the model");
  const auto& [shard_idx, ti] = entry->second;
  if (!shape.empty() && shape != ti.shape) {
    std::string want, got;
    for (auto d : shape) want += std::to_string(d) + " ";
    for (auto d : ti.shape) got += std::to_string(d) + " ";
    fail(ErrorCode::invalid_argument, "tensor '" + name + "' has shape [ " + got + "], expected [ " + want + "]");
  }
  const Shard& sh = *shards_[shard_idx];
  const uint8_t* p = sh.map + sh.data_start + ti.begin;
  const size_t bytes = ti.end - ti.begin;
  const auto n = static_cast<size_t>(ti.elements());
  std::vector<float> out(n);
  if (ti.dtype == "F32") {
    if (bytes != n * 4) fail(ErrorCode::invalid_argument, "tensor '" + name + "' size mismatch");
    std::memcpy(out.data(), p, bytes);
  } else if (ti.dtype == "F16" || ti.dtype == "BF16") {
    if (bytes != n * 2) fail(ErrorCode::invalid_argument, "tensor '" + name + "' size mismatch");
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      if (ti.dtype == "F16") {
        out[i] = half_to_float(h);
      } else {
        uint32_t bits = static_cast<uint32_t>(h) << 16;
        std::memcpy(&out[i], &bits, 4);
      }
    }
  } else {
    fail(ErrorCode::invalid_argument, "tensor '" + name + "' has unsupported dtype " + ti.dtype);
  }
  return out;
}

void write_safetensors(const fs::path& file,
                       const std::vector<std::pair<std::string, std::pair<std::vector<int64_t>, std::vector<float>>>>& tensors) {
  json header = json::object();
  uint64_t off = 0;
  for (const auto& [name, t] : tensors) {
    uint64_t bytes = t.second.size() * 4;
    header[name] = {{"dtype", "F32"}, {"shape", t.first}, {"data_offsets", {off, off + bytes}}};
    off += bytes;
  }
  std::string h = header.dump();
  while (h.size() % 8) h.push_back(' ');
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  uint64_t len = h.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  for (const auto& [name, t] : tensors)
    out.write(reinterpret_cast<const char*>(t.second.data()), static_cast<std::streamsize>(t.second.size() * 4));
  if (!out) fail(ErrorCode::unavailable, "cannot write " + file.string());
}

}  // namespace eagle::encode
