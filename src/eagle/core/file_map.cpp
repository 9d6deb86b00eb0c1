#include "eagle/core/file_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "eagle/core/error.h"

namespace eagle {

std::shared_ptr<const FileMap> FileMap::open(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::unavailable, "cannot open " + file.string() + " to map it: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(ErrorCode::unavailable, "cannot stat " + file.string() + ": " + std::strerror(err));
  }
  std::shared_ptr<FileMap> map(new FileMap());
  map->size_ = static_cast<size_t>(st.st_size);
  if (map->size_ > 0) {
    void* p = ::mmap(nullptr, map->size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail(ErrorCode::unavailable, "cannot map " + file.string() + ": " + std::strerror(err));
    }
    map->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the file
  return map;
}

FileMap::~FileMap() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void FileMap::advise_random(size_t offset, size_t bytes) const {
  if (!data_ || offset >= size_) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t start = offset / page * page;
  const size_t end = std::min(size_, offset + bytes);
  ::madvise(const_cast<uint8_t*>(data_) + start, end - start, MADV_RANDOM);
}

void FileMap::advise_sequential() const {
  if (data_) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_SEQUENTIAL);
}

}  // namespace eagle
