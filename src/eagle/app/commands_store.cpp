// The store's lifecycle on the command line (the server's /documents, /collections,
// /knowledge_bases and /tags, as commands): documents list|show|delete|tag,
// collections, knowledge-bases, tags, checkpoint, compact, repair, reembed, image (a tile's kept
// image). Readers open the store
// read-only; delete, tag, checkpoint and compact take the store's write lock.
#include <cstdio>
#include <iostream>
#include <memory>


#include "eagle/app/cli.h"
#include "eagle/app/engine.h"
#include "eagle/app/json_views.h"
#include "eagle/app/progress.h"
#include "eagle/core/error.h"
#include "eagle/ingest/text_util.h"

namespace eagle::app {
namespace {
using nlohmann::json;

struct DocumentFlags {
  std::string kb_name, plugin_namespace, kind;
  size_t limit = 50, offset = 0;
  bool as_json = false;
  std::string id;
  std::vector<std::string> tags;
};

int print_json(const json& j) {
  std::cout << j.dump(2) << "\n";
  return 0;
}

// documents list | show | delete | tag.
void add_document_commands(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto flags = std::make_shared<DocumentFlags>();
  auto* docs = app.add_subcommand("documents", "list, show, delete or tag the documents of the store");
  docs->require_subcommand(1);

  auto* list = docs->add_subcommand("list", "documents in the registry, sorted by id (paged)");
  list->add_option("--kb", flags->kb_name, "only this knowledge base");
  list->add_option("--namespace", flags->plugin_namespace, "only this plugin namespace");
  list->add_option("--kind", flags->kind,
                   "only this kind (source_type: label, paper, abstract, compound, ...); 'all' for every kind (default: "
                   "all but compound cards, listed apart)");
  list->add_option("--limit", flags->limit, "documents per page (1..10000)")->capture_default_str();
  list->add_option("--offset", flags->offset, "documents to skip")->capture_default_str();
  list->add_flag("--json", flags->as_json, "print JSON");
  out.push_back({list, [&g, flags] {
                   Engine engine(resolve_config(g), StoreAccess::read_only);
                   registry::DocumentQuery q;
                   if (!flags->kb_name.empty()) q.kb_names = {flags->kb_name};
                   if (!flags->plugin_namespace.empty()) q.plugin_namespace = flags->plugin_namespace;
                   apply_document_kind(q, flags->kind);
                   q.limit = flags->limit;
                   q.offset = flags->offset;
                   size_t total = 0;
                   auto rows = engine.list_documents(q, &total);
                   if (flags->as_json) return print_json(document_list_json(engine, rows, total, q));
                   for (const auto& d : rows)
                     std::printf("%-40s  kb=%-12s ns=%-7s %s\n", d.document_id.c_str(), d.kb_name.c_str(),
                                 d.plugin_namespace.c_str(), d.name.c_str());
                   std::printf("(%zu of %zu documents, offset %zu)\n", rows.size(), total, q.offset);
                   return 0;
                 }});

  auto* show = docs->add_subcommand("show", "a document's registry record, tags and chunks in order");
  show->add_option("id", flags->id, "document id")->required();
  show->add_flag("--json", flags->as_json, "print JSON");
  out.push_back({show, [&g, flags] {
                   Engine engine(resolve_config(g), StoreAccess::read_only);
                   auto v = engine.document(flags->id);
                   if (!v) fail(ErrorCode::not_found, "no document '" + flags->id + "'");
                   if (flags->as_json) return print_json(document_view_json(*v));
                   std::printf("%s  (%s)  kb=%s  ns=%s  collections=%s  tags=%s\n", v->record.document_id.c_str(),
                               v->record.name.c_str(), v->record.kb_name.c_str(), v->record.plugin_namespace.c_str(),
                               json(v->record.collections_used).dump().c_str(), json(v->tags).dump().c_str());
                   for (const auto& c : v->chunks) {
                     // One line per chunk: its kind, page (PDF) and the start of its text.
                     std::string preview(ingest::utf8_prefix(ingest::collapse_whitespace(c.text), 100));
                     std::string kind = c.metadata.value("type", std::string());
                     if (c.metadata.contains("page") && c.metadata["page"].is_number_integer())
                       kind += " p." + std::to_string(c.metadata["page"].get<int64_t>());
                     std::printf("  %-40s [%s] %-12s %s\n", c.id.c_str(), c.collection.c_str(), kind.c_str(),
                                 preview.c_str());
                   }
                   std::printf("(%zu chunks)\n", v->chunks.size());
                   return 0;
                 }});

  auto* del = docs->add_subcommand("delete", "remove a document's chunks from every collection and its registry row");
  del->add_option("id", flags->id, "document id")->required();
  out.push_back({del, [&g, flags] {
                   Engine engine(resolve_config(g), StoreAccess::write, "eagle documents delete");
                   size_t n = engine.delete_document(flags->id);
                   std::printf("deleted document %s (%zu chunks)\n", flags->id.c_str(), n);
                   return 0;
                 }});

  auto* tag = docs->add_subcommand("tag", "replace a document's tags (document_keywords) in a namespace");
  tag->add_option("id", flags->id, "document id")->required();
  tag->add_option("tags", flags->tags, "tags (none: clear)");
  tag->add_option("--namespace", flags->plugin_namespace, "plugin namespace of the tags (default: the document's)");
  out.push_back({tag, [&g, flags] {
                   Engine engine(resolve_config(g), StoreAccess::write, "eagle documents tag");
                   std::string ns = flags->plugin_namespace;
                   if (ns.empty()) {
                     auto v = engine.document(flags->id);
                     if (!v) fail(ErrorCode::not_found, "no document '" + flags->id + "'");
                     ns = v->record.plugin_namespace;
                   }
                   auto tags = engine.set_tags(flags->id, ns, flags->tags);
                   std::printf("%s tags (%s): %s\n", flags->id.c_str(), ns.c_str(), json(tags).dump().c_str());
                   return 0;
                 }});
}

// collections, knowledge-bases, tags: what the store holds.
void add_listing_commands(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto* colls = app.add_subcommand("collections", "the store's collections: rows, dimension, encoder, index, log bytes");
  auto colls_json = std::make_shared<bool>(false);
  colls->add_flag("--json", *colls_json, "print JSON");
  out.push_back({colls, [&g, colls_json] {
                   Engine engine(resolve_config(g), StoreAccess::read_only);
                   auto infos = engine.collection_infos();
                   if (*colls_json) return print_json(collection_list_json(infos));
                   for (const auto& i : infos)
                     std::printf("%-20s rows %-8zu deleted %-6zu dim %-5u %-6s %-5s encoder %-12s log %llu bytes\n",
                                 i.name.c_str(), i.rows, i.deleted, i.dimension, i.metric.c_str(), i.index.c_str(),
                                 i.encoder.c_str(), static_cast<unsigned long long>(i.log_bytes));
                   if (infos.empty()) std::printf("(no collections: add documents with `eagle ingest`)\n");
                   return 0;
                 }});

  auto* kbs = app.add_subcommand("knowledge-bases", "knowledge bases with their document counts");
  out.push_back({kbs, [&g] {
                   Engine engine(resolve_config(g), StoreAccess::read_only);
                   for (const auto& k : engine.knowledge_bases())
                     std::printf("%-30s %zu documents\n", k.name.empty() ? "(none)" : k.name.c_str(), k.count);
                   return 0;
                 }});

  auto* tags = app.add_subcommand("tags", "tags with their document counts");
  auto tags_ns = std::make_shared<std::string>();
  tags->add_option("--namespace", *tags_ns, "only this plugin namespace");
  out.push_back({tags, [&g, tags_ns] {
                   Engine engine(resolve_config(g), StoreAccess::read_only);
                   std::optional<std::string> ns;
                   if (!tags_ns->empty()) ns = *tags_ns;
                   for (const auto& t : engine.tags(ns)) std::printf("%-30s %zu documents\n", t.name.c_str(), t.count);
                   return 0;
                 }});
}

// checkpoint, repair, reembed: the store's logs and vectors.
void add_maintenance_commands(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto* cp = app.add_subcommand("checkpoint", "write a segment of every collection so the next open skips the log replay");
  out.push_back({cp, [&g] {
                   Engine engine(resolve_config(g), StoreAccess::write, "eagle checkpoint");
                   engine.checkpoint();
                   for (const auto& i : engine.collection_infos())
                     std::printf("%-20s checkpointed at lsn %llu (%zu rows)\n", i.name.c_str(),
                                 static_cast<unsigned long long>(i.last_lsn), i.rows);
                   return 0;
                 }});
  auto* repair = app.add_subcommand(
      "repair", "after a corruption error: cut each damaged write-ahead log at its first bad record, keeping the "
                "records before it (the removed bytes are kept in *.damaged* files)");
  out.push_back({repair, [&g] {
                   Engine engine(resolve_config(g), StoreAccess::write, "eagle repair");
                   auto done = engine.repair();
                   for (const auto& [name, r] : done) {
                     if (!r.whole_file)
                       std::printf("%-20s %s: cut at byte %llu, %llu intact records kept, %llu bytes moved to %s\n",
                                   name.c_str(), r.file.filename().c_str(), static_cast<unsigned long long>(r.offset),
                                   static_cast<unsigned long long>(r.records_kept),
                                   static_cast<unsigned long long>(r.bytes_removed), r.moved_to.c_str());
                     else
                       std::printf("%-20s %s: follows the damage, moved to %s (%llu bytes)\n", name.c_str(),
                                   r.file.filename().c_str(), r.moved_to.c_str(),
                                   static_cast<unsigned long long>(r.bytes_removed));
                   }
                   if (done.empty()) std::printf("no damaged log: nothing to repair\n");
                   return 0;
                 }});
  auto* reembed = app.add_subcommand(
      "reembed", "rebuild a collection's vectors with an encoder as configured now (after its model changed, or to "
                 "move the collection to another encoder); searches see the old vectors or the new ones, never a mix");
  auto reembed_collection = std::make_shared<std::string>();
  auto reembed_encoder = std::make_shared<std::string>();
  reembed->add_option("--collection", *reembed_collection, "the collection (eagle collections lists them)")->required();
  reembed->add_option("--encoder", *reembed_encoder,
                      "encoder label (eagle encoders lists them); default: the label the collection records");
  out.push_back({reembed, [&g, reembed_collection, reembed_encoder] {
                   Engine engine(resolve_config(g), StoreAccess::write, "eagle reembed");
                   Progress progress("re-embedding");
                   auto rep = engine.reembed(*reembed_collection, *reembed_encoder, [&](size_t done, size_t total) {
                     progress.update(done, total, "rows");
                   });
                   progress.finish();
                   if (rep.unchanged) {
                     std::printf("%s: its vectors are already '%s' as configured now (%s); nothing to do\n",
                                 rep.collection.c_str(), rep.encoder.c_str(), rep.identity.c_str());
                     return 0;
                   }
                   std::printf("%s: %zu rows re-embedded\n  before: '%s', dim %u (%s)\n  now:    '%s', dim %u (%s)\n",
                               rep.collection.c_str(), rep.rows, rep.encoder_before.c_str(), rep.dim_before,
                               rep.identity_before.empty() ? "identity not recorded" : rep.identity_before.c_str(),
                               rep.encoder.c_str(), rep.dim, rep.identity.c_str());
                   if (const auto by = stand_in_of(engine.config(), rep.encoder); !by.empty())
                     std::printf("note: %s runs on %s (no model configured for it)\n", rep.encoder.c_str(),
                                 by.c_str());
                   return 0;
                 }});
}

// image (a tile's kept image) and compact.
void add_image_and_compact_commands(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  auto* image = app.add_subcommand("image", "write the kept image of a tile of the visual collection (a hit's image_id)");
  auto image_id = std::make_shared<std::string>();
  auto image_out = std::make_shared<std::string>();
  image->add_option("image_id", *image_id, "the tile's image_id (eagle search prints it)")->required();
  image->add_option("-o,--output", *image_out, "file to write (default: <image_id>.jpg|png in the current folder)");
  out.push_back({image, [&g, image_id, image_out] {
                   Engine engine(resolve_config(g), StoreAccess::read_only);
                   auto tile = engine.tile_image(*image_id);
                   if (!tile) fail(ErrorCode::not_found, "no tile '" + *image_id + "' in the visual collection");
                   std::string file = *image_out;
                   if (file.empty()) {
                     // The id names a document path ("a/b.pdf#page-3"): only its last part.
                     file = *image_id;
                     for (char& c : file)
                       if (c == '/' || c == '#' || c == '\\') c = '_';
                     file += tile->media_type == "image/png" ? ".png" : ".jpg";
                   }
                   std::FILE* f = std::fopen(file.c_str(), "wb");
                   if (!f) fail(ErrorCode::unavailable, "cannot write " + file);
                   const bool ok = std::fwrite(tile->bytes.data(), 1, tile->bytes.size(), f) == tile->bytes.size();
                   if (std::fclose(f) != 0 || !ok) fail(ErrorCode::unavailable, "cannot write " + file);
                   std::printf("%s: %zu bytes (%s)\n", file.c_str(), tile->bytes.size(), tile->media_type.c_str());
                   return 0;
                 }});
  auto* compact = app.add_subcommand("compact", "checkpoint and drop deleted rows, rebuilding the indexes");
  out.push_back({compact, [&g] {
                   Engine engine(resolve_config(g), StoreAccess::write, "eagle compact");
                   const size_t images = engine.compact();
                   for (const auto& i : engine.collection_infos())
                     std::printf("%-20s compacted: %zu rows, %zu deleted\n", i.name.c_str(), i.rows, i.deleted);
                   std::printf("images: %zu no longer named by any row removed\n", images);
                   return 0;
                 }});
}

}  // namespace

void add_store_commands(CLI::App& app, const GlobalFlags& g, std::vector<Command>& out) {
  add_document_commands(app, g, out);
  add_listing_commands(app, g, out);
  add_maintenance_commands(app, g, out);
  add_image_and_compact_commands(app, g, out);
}

}  // namespace eagle::app
