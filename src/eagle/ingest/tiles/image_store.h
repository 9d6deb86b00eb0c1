#pragma once
// The image store: the encoded image of every tile of the visual collection, kept so
// a hit can be shown. Files are named by their content,
// DATA_DIR/images/<first two hex digits>/<sha256>.<jpg|png>, so a tile ingested twice
// is stored once and a name can be checked against its bytes when read: a flipped
// byte is reported, never served. Rows name their image in the `image` field.
//
// A file is durable before the rows naming it are committed (written to a temporary
// file, fsynced, renamed, folder fsynced). An ingest that fails after writing leaves
// unnamed files behind, which no row reaches; they are reused by the next ingest of
// the same bytes, and `eagle compact` removes them with the images of deleted rows.
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

namespace eagle::ingest {

class ImageStore {
 public:
  explicit ImageStore(std::filesystem::path root) : root_(std::move(root)) {}

  // Keeps `bytes` (a JPEG or PNG, `extension` "jpg" or "png") and returns its name.
  std::string put(std::string_view bytes, std::string_view extension) const;
  // The bytes of a kept image. not_found when there is none by that name;
  // invalid_argument for a name that is not one this store makes; data_loss naming
  // the file when its bytes no longer match their name.
  std::string get(std::string_view name) const;
  std::filesystem::path path_of(std::string_view name) const;
  // Removes every kept image whose name is not in `keep`, and temporary files a crash
  // left behind; returns how many files went. Only while no ingest can write (the
  // Engine's compact holds the ingest lock): an image written for rows not yet
  // committed is unreferenced too.
  size_t remove_unreferenced(const std::set<std::string>& keep) const;
  // "<64 lower-case hex>.<jpg|png>"
  static bool valid_name(std::string_view name);
  // The media type of a name's image ("image/jpeg", "image/png").
  static std::string media_type(std::string_view name);

 private:
  std::filesystem::path root_;
};

}  // namespace eagle::ingest
