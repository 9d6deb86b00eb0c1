#include "eagle/encode/static/word_vectors.h"

#include "eagle/core/atomic_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "eagle/core/error.h"
#include "eagle/encode/safetensors.h"
#include "eagle/text/analyzer.h"
#include "eagle/text/wordpiece.h"

namespace eagle::encode {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'E', 'G', 'L', 'W', 'V', '1', '\0', '\0'};
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t dim;
  uint64_t count;
  uint64_t strings_bytes;
  uint8_t reserved[32];
};
static_assert(sizeof(Header) == 64);

// Minimal JSON string reader for the converter: p points after the opening quote.
std::string read_json_string(const char*& p, const char* end) {
  std::string s;
  while (p < end && *p != '"') {
    if (*p == '\\' && p + 1 < end) {
      ++p;
      switch (*p) {
        case 'n': s.push_back('\n'); break;
        case 't': s.push_back('\t'); break;
        case 'r': s.push_back('\r'); break;
        case 'b': s.push_back('\b'); break;
        case 'f': s.push_back('\f'); break;
        case 'u': {
          if (p + 4 >= end) fail(ErrorCode::invalid_argument, "truncated \\u escape");
          unsigned cp = 0;
          for (int i = 1; i <= 4; ++i) {
            const char c = p[i];
            const int digit = c >= '0' && c <= '9'   ? c - '0'
                              : c >= 'a' && c <= 'f' ? c - 'a' + 10
                              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                     : -1;
            if (digit < 0) fail(ErrorCode::invalid_argument, "bad \\u escape in word-vector JSON");
            cp = cp * 16 + static_cast<unsigned>(digit);
          }
          p += 4;
          // Surrogate pairs are rare in a word list; encode the BMP code point as is.
          if (cp < 0x80) s.push_back(static_cast<char>(cp));
          else if (cp < 0x800) {
            s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default: s.push_back(*p);
      }
      ++p;
    } else {
      s.push_back(*p++);
    }
  }
  if (p >= end) fail(ErrorCode::invalid_argument, "unterminated string in word-vector JSON");
  ++p;  // closing quote
  return s;
}

void skip_ws(const char*& p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
}

// A JSON number at p (never reading past end: the mapped file has no terminating NUL),
// or nullopt when there is none. p moves past it.
std::optional<double> read_number(const char*& p, const char* end) {
  char buf[64];
  size_t n = 0;
  while (p + n < end && n < sizeof(buf) - 1 &&
         (std::isdigit(static_cast<unsigned char>(p[n])) || p[n] == '-' || p[n] == '+' || p[n] == '.' ||
          p[n] == 'e' || p[n] == 'E'))
    buf[n] = p[n], ++n;
  buf[n] = '\0';
  char* after = nullptr;
  const double x = std::strtod(buf, &after);
  if (after == buf) return std::nullopt;
  p += after - buf;
  return x;
}

}  // namespace

size_t convert_wink_json(const fs::path& json_file, const fs::path& out_file) {
  int fd = ::open(json_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::not_found, "cannot open " + json_file.string() + " (run scripts/setup.sh: npm assets)");
  struct stat sb;
  fstat(fd, &sb);
  const size_t size = static_cast<size_t>(sb.st_size);
  void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) fail(ErrorCode::unavailable, "cannot map " + json_file.string());
  const char* begin = static_cast<const char*>(m);
  const char* end = begin + size;
  struct Word {
    std::string text;
    uint32_t rank;
    std::vector<float> v;
  };
  std::vector<Word> words;
  uint32_t dim = 0;
  try {
    // "dimensions":N
    const char* dims = static_cast<const char*>(memmem(begin, std::min<size_t>(size, 4096), "\"dimensions\":", 13));
    if (!dims) fail(ErrorCode::invalid_argument, "no \"dimensions\" in " + json_file.string());
    const char* at = dims + 13;
    const auto d = read_number(at, end);
    if (!d || !(*d >= 1 && *d <= 4096) || *d != std::floor(*d))
      fail(ErrorCode::invalid_argument, "bad dimensions in " + json_file.string());
    dim = static_cast<uint32_t>(*d);
    const char* p = static_cast<const char*>(memmem(begin, size, "\"vectors\":{", 11));
    if (!p) fail(ErrorCode::invalid_argument, "no \"vectors\" object in " + json_file.string());
    p += 11;
    uint32_t position = 0;
    for (;;) {
      skip_ws(p, end);
      if (p < end && *p == '}') break;
      if (p >= end || *p != '"') fail(ErrorCode::invalid_argument, "expected a word in the vectors object");
      ++p;
      Word w;
      w.text = read_json_string(p, end);
      skip_ws(p, end);
      if (p >= end || *p != ':') fail(ErrorCode::invalid_argument, "expected ':' after '" + w.text + "'");
      ++p;
      skip_ws(p, end);
      if (p >= end || *p != '[') fail(ErrorCode::invalid_argument, "expected '[' for '" + w.text + "'");
      ++p;
      std::vector<double> nums;
      for (;;) {
        skip_ws(p, end);
        const auto x = read_number(p, end);
        // A component must fit a float (the rank after the vector is checked below).
        if (!x || !std::isfinite(*x) || (nums.size() < dim && std::fabs(*x) > std::numeric_limits<float>::max()))
          fail(ErrorCode::invalid_argument, "bad number in the vector of '" + w.text + "'");
        nums.push_back(*x);
        skip_ws(p, end);
        if (p < end && *p == ',') {
          ++p;
          continue;
        }
        if (p < end && *p == ']') {
          ++p;
          break;
        }
        fail(ErrorCode::invalid_argument, "bad vector for '" + w.text + "'");
      }
      if (nums.size() < dim) fail(ErrorCode::invalid_argument, "short vector for '" + w.text + "'");
      w.v.assign(nums.begin(), nums.begin() + dim);
      // wink appends the l2 norm and the word's frequency index after the vector.
      const bool has_rank = nums.size() >= dim + 2 && nums[dim + 1] >= 0 && nums[dim + 1] < 4294967296.0;
      w.rank = has_rank ? static_cast<uint32_t>(nums[dim + 1]) : position;
      ++position;
      words.push_back(std::move(w));
      skip_ws(p, end);
      if (p < end && *p == ',') ++p;
    }
  } catch (...) {
    munmap(m, size);
    throw;
  }
  munmap(m, size);
  std::sort(words.begin(), words.end(), [](const Word& a, const Word& b) { return a.text < b.text; });
  words.erase(std::unique(words.begin(), words.end(), [](const Word& a, const Word& b) { return a.text == b.text; }),
              words.end());

  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = 1;
  h.dim = dim;
  h.count = words.size();
  std::vector<uint32_t> offsets;
  std::string strings;
  for (const auto& w : words) {
    offsets.push_back(static_cast<uint32_t>(strings.size()));
    strings += w.text;
  }
  offsets.push_back(static_cast<uint32_t>(strings.size()));
  h.strings_bytes = strings.size();
  fs::create_directories(out_file.parent_path().empty() ? "." : out_file.parent_path());
  // Two processes may convert at once on a fresh machine: each writes its own
  // temporary file and renames it whole (write_shared_file_atomic).
  write_shared_file_atomic(out_file, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(&h), sizeof(h));
    out.write(reinterpret_cast<const char*>(offsets.data()), static_cast<std::streamsize>(offsets.size() * 4));
    for (const auto& w : words) out.write(reinterpret_cast<const char*>(&w.rank), 4);
    std::vector<int8_t> q(dim);
    std::vector<float> scales;
    for (const auto& w : words) {
      float mx = 0;
      for (float x : w.v) mx = std::max(mx, std::fabs(x));
      const float scale = mx / 127.0f;  // 0 for a zero vector (or one of denormals): 1 instead
      scales.push_back(scale > 0 ? scale : 1.0f);
    }
    out.write(reinterpret_cast<const char*>(scales.data()), static_cast<std::streamsize>(scales.size() * 4));
    for (size_t i = 0; i < words.size(); ++i) {
      for (uint32_t d = 0; d < dim; ++d)
        q[d] = static_cast<int8_t>(std::lround(std::clamp(words[i].v[d] / scales[i], -127.0f, 127.0f)));
      out.write(reinterpret_cast<const char*>(q.data()), dim);
    }
    out.write(strings.data(), static_cast<std::streamsize>(strings.size()));
  });
  return words.size();
}

WordVectors::WordVectors(WordVectors&& o) noexcept { *this = std::move(o); }
WordVectors& WordVectors::operator=(WordVectors&& o) noexcept {
  std::swap(map_, o.map_);
  std::swap(map_size_, o.map_size_);
  dim_ = o.dim_;
  count_ = o.count_;
  offsets_ = o.offsets_;
  ranks_ = o.ranks_;
  scales_ = o.scales_;
  vectors_ = o.vectors_;
  strings_ = o.strings_;
  return *this;
}
WordVectors::~WordVectors() {
  if (map_) munmap(const_cast<uint8_t*>(map_), map_size_);
}

WordVectors WordVectors::open(const fs::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::not_found, "cannot open word vectors " + file.string());
  struct stat sb;
  fstat(fd, &sb);
  WordVectors wv;
  wv.map_size_ = static_cast<size_t>(sb.st_size);
  if (wv.map_size_ < sizeof(Header)) {
    ::close(fd);
    fail(ErrorCode::invalid_argument, file.string() + ": not an Eagle word-vector file");
  }
  void* m = mmap(nullptr, wv.map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) fail(ErrorCode::unavailable, "cannot map " + file.string());
  wv.map_ = static_cast<const uint8_t*>(m);
  Header h;
  std::memcpy(&h, wv.map_, sizeof(h));
  if (std::memcmp(h.magic, kMagic, 8) != 0 || h.version != 1 || h.dim == 0)
    fail(ErrorCode::invalid_argument, file.string() + ": not an Eagle word-vector file");
  const uint64_t need = sizeof(Header) + (h.count + 1) * 4 + h.count * 4 + h.count * 4 + h.count * h.dim + h.strings_bytes;
  if (need != wv.map_size_) fail(ErrorCode::invalid_argument, file.string() + ": truncated or corrupt");
  wv.dim_ = h.dim;
  wv.count_ = h.count;
  const uint8_t* p = wv.map_ + sizeof(Header);
  wv.offsets_ = reinterpret_cast<const uint32_t*>(p);
  p += (h.count + 1) * 4;
  wv.ranks_ = reinterpret_cast<const uint32_t*>(p);
  p += h.count * 4;
  wv.scales_ = reinterpret_cast<const float*>(p);
  p += h.count * 4;
  wv.vectors_ = reinterpret_cast<const int8_t*>(p);
  p += h.count * h.dim;
  wv.strings_ = reinterpret_cast<const char*>(p);
  if (wv.offsets_[h.count] != h.strings_bytes) fail(ErrorCode::invalid_argument, file.string() + ": corrupt strings");
  return wv;
}

std::optional<uint32_t> WordVectors::find(std::string_view word) const {
  size_t lo = 0, hi = count_;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    std::string_view w(strings_ + offsets_[mid], offsets_[mid + 1] - offsets_[mid]);
    if (w < word) lo = mid + 1;
    else hi = mid;
  }
  if (lo < count_) {
    std::string_view w(strings_ + offsets_[lo], offsets_[lo + 1] - offsets_[lo]);
    if (w == word) return static_cast<uint32_t>(lo);
  }
  return std::nullopt;
}

uint32_t WordVectors::rank(uint32_t i) const { return ranks_[i]; }

void WordVectors::add_to(uint32_t i, float weight, float* acc) const {
  const int8_t* v = vectors_ + static_cast<size_t>(i) * dim_;
  const float s = weight * scales_[i];
  for (uint32_t d = 0; d < dim_; ++d) acc[d] += s * static_cast<float>(v[d]);
}

std::vector<float> WordVectors::vector(uint32_t i) const {
  std::vector<float> out(dim_, 0.0f);
  add_to(i, 1.0f, out.data());
  return out;
}

std::vector<std::string> static_tokens(std::string_view raw) {
  const std::string text = text::normalize(raw);
  std::vector<std::string> out;
  auto is_word = [](unsigned char c) { return std::isalnum(c) || c >= 0x80; };
  size_t i = 0;
  while (i < text.size()) {
    if (!is_word(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size()) {
      if (is_word(static_cast<unsigned char>(text[j]))) {
        ++j;
      } else if ((text[j] == '-' || text[j] == '\'') && j + 1 < text.size() &&
                 is_word(static_cast<unsigned char>(text[j + 1]))) {
        ++j;
      } else {
        break;
      }
    }
    out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

namespace {

void l2_normalise(std::vector<float>& v) {
  double n = 0;
  for (float x : v) n += static_cast<double>(x) * x;
  if (n > 0) {
    const float inv = static_cast<float>(1.0 / std::sqrt(n));
    for (auto& x : v) x *= inv;
  }
}

class GloveEncoder : public Encoder {
 public:
  GloveEncoder(std::string label, WordVectors wv, StaticEncoderOptions opts)
      : wv_(std::move(wv)), opts_(opts) {
    info_.label = std::move(label);
    info_.implementation = "static";
    info_.dim = wv_.dim();
    info_.metric = Metric::cosine;
    info_.max_batch = 1024;
    // Zipf estimate of a word's probability from its frequency rank (GloVe ships
    // ranks, not counts): p(r) = 1 / ((r + 1) * H_N).
    harmonic_ = std::log(static_cast<double>(wv_.size())) + 0.5772156649;
  }
  const EncoderInfo& info() const override { return info_; }

  std::vector<Embedding> encode(const std::vector<std::string>& inputs, EncodeMode) override {
    std::vector<Embedding> out;
    out.reserve(inputs.size());
    for (const auto& text : inputs) {
      Embedding acc(info_.dim, 0.0f);
      for (const auto& tok : static_tokens(text)) {
        if (add_word(tok, acc)) continue;
        // A hyphenated word missing from the vocabulary contributes its parts.
        size_t s = 0;
        while (s <= tok.size()) {
          size_t e = tok.find('-', s);
          if (e == std::string::npos) e = tok.size();
          if (e > s) add_word(tok.substr(s, e - s), acc);
          s = e + 1;
        }
      }
      l2_normalise(acc);
      out.push_back(std::move(acc));
    }
    return out;
  }

 private:
  bool add_word(const std::string& w, Embedding& acc) const {
    auto idx = wv_.find(w);
    if (!idx) return false;
    const double p = 1.0 / ((wv_.rank(*idx) + 1.0) * harmonic_);
    wv_.add_to(*idx, static_cast<float>(opts_.sif_a / (opts_.sif_a + p)), acc.data());
    return true;
  }

  EncoderInfo info_;
  WordVectors wv_;
  StaticEncoderOptions opts_;
  double harmonic_;
};

class Model2VecEncoder : public Encoder {
 public:
  Model2VecEncoder(std::string label, const fs::path& folder) {
    auto st = SafeTensors::open(folder / "model.safetensors");
    const auto& ti = st.info("embeddings");
    if (ti.shape.size() != 2) fail(ErrorCode::invalid_argument, "model2vec embeddings must be 2-D");
    rows_ = static_cast<size_t>(ti.shape[0]);
    info_.dim = static_cast<uint32_t>(ti.shape[1]);
    table_ = st.read("embeddings");
    std::vector<std::string> vocab;
    if (fs::exists(folder / "vocab.txt")) {
      std::ifstream in(folder / "vocab.txt");
      std::string line;
      while (std::getline(in, line)) vocab.push_back(line);
    } else {
      std::ifstream in(folder / "tokenizer.json");
      if (!in) fail(ErrorCode::not_found, folder.string() + " has neither vocab.txt nor tokenizer.json");
      auto j = nlohmann::json::parse(in);
      const auto& v = j.at("model").at("vocab");
      vocab.resize(v.size());
      for (const auto& [tok, id] : v.items()) {
        auto i = id.get<size_t>();
        if (i >= vocab.size()) fail(ErrorCode::invalid_argument, "tokenizer.json: id out of range");
        vocab[i] = tok;
      }
    }
    if (vocab.size() != rows_)
      fail(ErrorCode::invalid_argument, "model2vec vocabulary has " + std::to_string(vocab.size()) +
                                            " tokens but the embedding table " + std::to_string(rows_) + " rows");
    tokenizer_ = std::make_unique<text::WordPieceTokenizer>(std::move(vocab));
    info_.label = std::move(label);
    info_.implementation = "model2vec";
  }
  const EncoderInfo& info() const override { return info_; }
  std::vector<Embedding> encode(const std::vector<std::string>& inputs, EncodeMode) override {
    std::vector<Embedding> out;
    for (const auto& text : inputs) {
      Embedding acc(info_.dim, 0.0f);
      for (int32_t id : tokenizer_->encode_ids(text)) {
        const float* row = table_.data() + static_cast<size_t>(id) * info_.dim;
        for (uint32_t d = 0; d < info_.dim; ++d) acc[d] += row[d];
      }
      l2_normalise(acc);
      out.push_back(std::move(acc));
    }
    return out;
  }

 private:
  EncoderInfo info_;
  size_t rows_ = 0;
  std::vector<float> table_;
  std::unique_ptr<text::WordPieceTokenizer> tokenizer_;
};

}  // namespace

std::unique_ptr<Encoder> make_glove_encoder(std::string label, const fs::path& file, StaticEncoderOptions opts) {
  return std::make_unique<GloveEncoder>(std::move(label), WordVectors::open(file), opts);
}

std::unique_ptr<Encoder> make_model2vec_encoder(std::string label, const fs::path& folder) {
  return std::make_unique<Model2VecEncoder>(std::move(label), folder);
}

}  // namespace eagle::encode
