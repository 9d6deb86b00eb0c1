#pragma once
// A file mapped read-only for the life of the object. Its pages belong to the page
// cache: they count in a process's file-backed memory (RssFile), not its heap
// (RssAnon), are shared by every process that maps the file, and the kernel can drop
// and re-read them under memory pressure. An index that reads large immutable arrays
// in place (a sealed segment's vectors and graph) keeps a shared_ptr to the map, so
// the file stays mapped as long as anything reads it, even after it is unlinked.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

namespace eagle {

class FileMap {
 public:
  // The whole file, read-only; unavailable (naming the file) when it cannot be mapped.
  static std::shared_ptr<const FileMap> open(const std::filesystem::path& file);
  ~FileMap();
  FileMap(const FileMap&) = delete;
  FileMap& operator=(const FileMap&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // The bytes [offset, offset + bytes) will be read in random order (a graph walk):
  // the kernel should not read ahead around each fault.
  void advise_random(size_t offset, size_t bytes) const;
  // The whole file will be read once, in order (a checksum pass): read ahead widely.
  void advise_sequential() const;

 private:
  FileMap() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace eagle
