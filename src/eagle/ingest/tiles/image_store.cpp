#include "eagle/ingest/tiles/image_store.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "eagle/core/atomic_file.h"
#include "eagle/core/error.h"
#include "eagle/ingest/formats.h"

namespace eagle::ingest {

namespace fs = std::filesystem;

bool ImageStore::valid_name(std::string_view name) {
  if (name.size() != 64 + 4 || name[64] != '.') return false;
  for (size_t i = 0; i < 64; ++i)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return false;
  const auto ext = name.substr(65);
  return ext == "jpg" || ext == "png";
}

std::string ImageStore::media_type(std::string_view name) {
  return name.size() > 4 && name.substr(name.size() - 3) == "png" ? "image/png" : "image/jpeg";
}

fs::path ImageStore::path_of(std::string_view name) const {
  if (!valid_name(name)) fail(ErrorCode::invalid_argument, "'" + std::string(name) + "' is not an image name");
  return root_ / std::string(name.substr(0, 2)) / std::string(name);
}

std::string ImageStore::put(std::string_view bytes, std::string_view extension) const {
  if (extension != "jpg" && extension != "png")
    fail(ErrorCode::invalid_argument, "an image is kept as jpg or png, not '" + std::string(extension) + "'");
  const std::string name = bytes_sha256(bytes) + "." + std::string(extension);
  const fs::path file = path_of(name);
  std::error_code ec;
  if (fs::exists(file, ec)) return name;  // the same bytes, kept before
  const fs::path dir = file.parent_path();
  if (!fs::is_directory(dir, ec)) {
    const bool new_root = !fs::is_directory(root_, ec);
    fs::create_directories(dir, ec);
    if (ec) fail(ErrorCode::unavailable, "cannot create " + dir.string() + ": " + ec.message());
    // The new folders' entries are made durable in their parents.
    if (new_root) fsync_path(root_.parent_path().empty() ? fs::path(".") : root_.parent_path(), true);
    fsync_path(root_, true);
  }
  write_file_atomic(file, [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
  return name;
}

std::string ImageStore::get(std::string_view name) const {
  const fs::path file = path_of(name);
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(ErrorCode::not_found, "no image '" + std::string(name) + "' in the image store");
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string bytes = std::move(buf).str();
  if (bytes_sha256(bytes) != name.substr(0, 64))
    fail(ErrorCode::data_loss, file.string() + ": the image's bytes do not match its name (a damaged file)");
  return bytes;
}

size_t ImageStore::remove_unreferenced(const std::set<std::string>& keep) const {
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return 0;
  size_t removed = 0;
  for (const auto& dir : fs::directory_iterator(root_, ec)) {
    if (!dir.is_directory()) continue;
    bool changed = false;
    for (const auto& f : fs::directory_iterator(dir.path(), ec)) {
      if (!f.is_regular_file()) continue;
      const std::string name = f.path().filename().string();
      const bool kept_image = valid_name(name) && keep.count(name);
      const bool ours = valid_name(name) || name.find(".tmp") != std::string::npos;
      if (kept_image || !ours) continue;  // a file the store did not make is left alone
      std::error_code rm;
      if (fs::remove(f.path(), rm)) {
        ++removed;
        changed = true;
      } else if (rm) {
        fail(ErrorCode::unavailable, "cannot remove " + f.path().string() + ": " + rm.message());
      }
    }
    if (changed) fsync_path(dir.path(), true);
  }
  if (ec) fail(ErrorCode::unavailable, "cannot list " + root_.string() + ": " + ec.message());
  return removed;
}

}  // namespace eagle::ingest
