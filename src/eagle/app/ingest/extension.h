#pragma once
// What a plugin adds to an ingest, beside its hook subscribers (search/hookbus.h):
// the file kinds and input formats it reads, and the routing rule of its namespace.
// The ingest (run.h) knows nothing of any of them but these types.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eagle/app/ingest/slice.h"
#include "eagle/core/schema.h"
#include "eagle/encode/encoder.h"
#include "eagle/ingest/formats.h"

namespace eagle::app {

class IngestRun;

// A structured file kind (ingest/formats.h detects it) that a plugin reads: a drug
// label. The reader adds its documents and rows to the run's slice.
struct FileReader {
  ingest::FileKind kind = ingest::FileKind::unknown;
  std::string description;  // "an SPL label": named when an .xml is of no known kind
  // Where the rows go when the ingest names this format (--format) and no collection.
  std::optional<IngestRoute> default_route;
  std::function<void(IngestRun&, const std::filesystem::path&)> read;
};

// A format that is a whole ingest of its own (a compound table): every input is
// read by it; its rows are embedded from `modality` inputs into collections of its
// schema.
struct InputFormat {
  std::string name;       // --format NAME
  std::string extension;  // --format auto picks it when an input ends so (".csv")
  encode::Modality modality = encode::Modality::text;
  IngestRoute default_route;
  std::function<CollectionSchema(const std::string& collection, const encode::EncoderInfo& encoder)> schema;
  std::function<void(IngestRun&, const std::string& input)> read;
};

// A namespace's routing rule for text without an explicit collection (TDR): the
// collection each document goes to, from a sample of its text.
struct DocumentRouting {
  std::function<IngestRoute(std::string_view text)> route;
  // >0: one decision per input, from the routes of its first `input_sample` documents
  // (route_input; an empty list when it has none); 0: one per document.
  size_t input_sample = 0;
  std::function<IngestRoute(const std::vector<IngestRoute>& sample)> route_input;
};

// Everything the plugins of a build add to one ingest: readers and formats from
// every plugin (a label is read in any namespace), routing from the namespace's.
struct IngestExtensions {
  std::vector<FileReader> readers;
  std::vector<InputFormat> formats;
  std::optional<DocumentRouting> routing;

  const FileReader* reader_of(ingest::FileKind kind) const;
  const InputFormat* format_named(const std::string& name) const;
};

}  // namespace eagle::app
