#pragma once
#include <string>

#include "eagle/app/ingest/extension.h"

namespace eagle::app {
class Engine;
// Adds the biomedical plugin's readers (SPL labels), formats (compound tables) and,
// for its namespace, its routing rule (TDR) to `ext`.
void add_biomed_ingest_extensions(Engine& engine, const std::string& plugin_namespace, IngestExtensions& ext);
}  // namespace eagle::app
