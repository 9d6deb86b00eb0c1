#pragma once
// Base64 (RFC 4648, standard alphabet, padded): images in JSON requests (POST /search
// "image", MCP), MCP's encoded header values, and images sent to remote encoders.
#include <optional>
#include <string>
#include <string_view>

namespace eagle {

std::string base64_encode(std::string_view bytes);
// Strict: the length a multiple of 4, padding only at the end, no other characters
// (no white space). nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace eagle
