#pragma once
// What `eagle ingest --format auto` makes of a file: its extension, and for .xml the
// root element (an SPL label is <document>, PubMed <PubmedArticleSet>, JATS <article>).
// Structured documents (labels, articles, PDF, HTML, Markdown) are read file by file;
// text files (.txt, .jsonl) go through the corpus reader.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/ingest/article/article.h"

namespace eagle::ingest {

// image: a PNG or JPEG file (.png, .jpg, .jpeg), one row of the visual collection.
enum class FileKind { text, jsonl, markdown, spl, jats, pubmed, pdf, html, compounds, image, unknown };

std::string_view file_kind_name(FileKind kind);
// A path's extension, ASCII lower case (".PDF" -> ".pdf").
std::string lower_extension(const std::filesystem::path& path);
// "jats" -> FileKind::jats; "" or unknown names -> FileKind::unknown.
FileKind file_kind_from_name(std::string_view name);
// The kind of one file by extension (and root element for .xml); unknown when neither
// says (an .xml of another vocabulary, an image, a binary).
FileKind detect_file_kind(const std::filesystem::path& file);
bool is_structured(FileKind kind);
// The local name of an XML file's root element, from its first bytes ("" when none).
std::string xml_root_of(const std::filesystem::path& file);
// One walk of a folder for --format auto: its structured files (recursively, sorted by
// path), read file by file, an .xml of no known vocabulary listed as FileKind::unknown
// (the ingest reports it); and whether it holds files for the corpus reader (.txt,
// .jsonl). `as` forces a kind for every file with a matching extension (--format jats
// reads every .xml and .nxml as JATS).
struct FolderScan {
  std::vector<std::pair<std::filesystem::path, FileKind>> structured;
  bool has_text_files = false;
  std::vector<std::filesystem::path> links_out;  // not followed (leads_out_of)
};
// Whether a folder entry is a link whose target lies outside `folder` (canonical), or
// that cannot be resolved. A folder ingest reads what is beneath the folder it was
// given: a link out of it (to /etc/passwd, or out of the server's ingest root) is not
// followed, it is reported. Links to directories are never followed (the walk does
// not descend into them), so the entry itself is the only link to check.
bool leads_out_of(const std::filesystem::directory_entry& entry, const std::filesystem::path& folder);
FolderScan scan_folder(const std::filesystem::path& dir, FileKind as = FileKind::unknown);

// SHA-256 of a file's bytes, 64 lower-case hex digits (the ingest's dedup key). Throws
// eagle::Error (not_found) when the file cannot be read.
std::string file_sha256(const std::filesystem::path& file);
// SHA-256 of bytes in memory, the same form (an image tile's name in the image store).
std::string bytes_sha256(std::string_view bytes);

// Reads a JATS, PubMed, PDF, HTML or Markdown file into its documents (PubMed: one per
// article). `document_id` names the file's document (PubMed articles use their PMIDs).
// Markdown that is not valid UTF-8 is an error naming the byte offset, or repaired to
// U+FFFD with `repair_utf8`. Throws eagle::Error naming the file.
std::vector<Article> read_documents(const std::filesystem::path& file, FileKind kind, const std::string& document_id,
                                    bool repair_utf8 = false);

}  // namespace eagle::ingest
