#pragma once
// The document fuzz targets chunk what their reader returns: the chunker's edge and
// id rules run on every structure a reader can produce.
#include "eagle/core/error.h"
#include "eagle/ingest/article/article_chunker.h"

namespace eagle::fuzz {

inline void chunk(const ingest::Article& a) {
  ingest::ArticleChunkOptions o;
  o.max_chars = 200;  // small: the packing and splitting paths run on short inputs too
  ingest::chunk_article(a, o);
}

}  // namespace eagle::fuzz
