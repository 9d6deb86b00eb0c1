#include "eagle/core/base64.h"

namespace eagle {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view b64) {
  if (b64.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(b64.size() / 4 * 3);
  for (size_t i = 0; i < b64.size(); i += 4) {
    int v4[4];
    for (int k = 0; k < 4; ++k) {
      const char c = b64[i + k];
      const bool last_quad = i + 4 == b64.size();
      if (c == '=' && last_quad && k >= 2 && (k == 3 || b64[i + 3] == '=')) {
        v4[k] = -2;
        continue;
      }
      v4[k] = value_of(c);
      if (v4[k] < 0) return std::nullopt;
    }
    out.push_back(static_cast<char>((v4[0] << 2) | (v4[1] >> 4)));
    if (v4[2] >= 0) out.push_back(static_cast<char>(((v4[1] & 15) << 4) | (v4[2] >> 2)));
    if (v4[3] >= 0) out.push_back(static_cast<char>(((v4[2] & 3) << 6) | v4[3]));
  }
  return out;
}

}  // namespace eagle
