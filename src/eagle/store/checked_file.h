#pragma once
// Checksums for the store's files, verified when they are read, so a flipped byte
// anywhere is reported (file and byte range) instead of served or silently cut away.
//   Binary files (segments): the content, then a footer of one CRC-32 per 64 KiB
//     block, the content length, the block size and the magic "EGLCRC01".
//   JSON files (MANIFEST, schema.json): a "checksum" member, the CRC-32 of the
//     object's canonical dump without it.
// The write-ahead log carries a CRC per frame (wal.h).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>

#include "eagle/core/file_system.h"

namespace eagle::store {

inline constexpr uint32_t kChecksumBlock = 64 * 1024;

// io::write_file_atomic with the block-checksum footer appended before the rename.
void write_checked_file(io::FileSystem& fs, const std::filesystem::path& file,
                        const std::function<void(std::ostream&)>& write);

// Verifies the footer against the content; data_loss naming the file and the first
// bad block's byte range, or the footer itself. Returns the content length.
// `read_from`, when given, is where the bytes are read (/proc/self/fd/N: the very file
// a descriptor holds, whatever has since been renamed over `file`).
// `unchecked`: a byte range [first, second) whose blocks wholly inside it are not
// verified here, because each piece of it carries a checksum of its own checked when it
// is read (a segment's texts).
uint64_t verify_checked_file(const std::filesystem::path& file, const std::filesystem::path& read_from = {},
                             std::pair<uint64_t, uint64_t> unchecked = {0, 0});

// The content length a checked file's footer states, from the file's bytes (mapped),
// with the footer's own consistency checked but not the content's checksums (those
// verify_checked_file checks): data_loss when the footer is missing or does not fit.
uint64_t checked_content_length(const std::filesystem::path& file, const char* bytes, uint64_t size);

// A JSON object with its "checksum" member set / checked (data_loss when it does not
// match; an object without one is accepted: written before checksums existed).
nlohmann::json with_checksum(nlohmann::json object);
void verify_json_checksum(const nlohmann::json& object, const std::filesystem::path& file);

}  // namespace eagle::store
