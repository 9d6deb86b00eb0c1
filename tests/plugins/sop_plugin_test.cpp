// The example plugin `sop` (examples/plugins/sop, docs/plugins.md) registered by an
// embedding application, through nothing but the plugin interface: its namespace and
// keys, its chunk stamp and facet at ingest, its rerank hook, its MCP tool and command.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>

#include "eagle/app/cli.h"
#include "eagle/core/error.h"
#include "eagle/mcp/protocol.h"
#include "eagle/mcp/tools.h"
#include "eagle/plugin/plugin.h"
#include "sop_plugin.h"
#include "support/temp_engine.h"

namespace eagle {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// Registered before any configuration is read (as an embedding application does at start).
const bool kRegistered = [] {
  plugin::register_plugin(sop::sop_plugin());
  return true;
}();

// An SOP whose Procedure section says "calibration of the balance" most often: by
// words alone it answers a question about calibration first. The question below names
// the Responsibilities section by an alias ("roles") its text does not hold.
fs::path write_sop(const fs::path& dir) {
  const fs::path file = dir / "balance-calibration.md";
  std::ofstream(file) << "# Balance calibration\n\n"
                         "## Purpose\n\nThis procedure keeps the laboratory balance within tolerance.\n\n"
                         "## Responsibilities\n\nThe quality officer signs the log after each check.\n\n"
                         "## Procedure\n\nStart the calibration of the balance: calibration weights, calibration "
                         "of the balance at 10 g and 100 g, then the calibration record.\n\n"
                         "## Records\n\nKeep the calibration log for five years.\n";
  return file;
}

std::string section_of(const search::ScoredHit& h) { return h.field("sop_section"); }

TEST(SopPlugin, RegisteredItIsANamespaceWithItsKeysAndFields) {
  ASSERT_TRUE(kRegistered);
  const auto names = plugin::namespaces();
  EXPECT_NE(std::find(names.begin(), names.end(), "sop"), names.end());
  EXPECT_EQ(plugin::find_plugin("sop"), &sop::sop_plugin());
  EXPECT_THROW(plugin::register_plugin(sop::sop_plugin()), Error);  // the name is taken
  app::Config c;
  app::set_option(c, "sop.section_aliases", "Duties=responsibilities, scope=scope");
  EXPECT_EQ(sop::sop_settings(c).section_aliases.at("duties"), "responsibilities");
  EXPECT_EQ(sop::section_named(sop::sop_settings(c), "Whose duties are these?"), "responsibilities");
  EXPECT_EQ(sop::section_named(sop::sop_settings(c), "nothing named"), "");
  try {
    app::set_option(c, "sop.section_aliases", "no-equals-sign");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sop.section_aliases"), std::string::npos) << e.what();
  }
  EXPECT_THROW(app::set_option(c, "sop.section_boost", "-1"), Error);
  app::set_option(c, "pipeline.namespace", "sop");  // a namespace like any other
  const auto fields = plugin::plugin_chunk_fields();
  EXPECT_TRUE(std::any_of(fields.begin(), fields.end(), [](const FieldSchema& f) { return f.name == "sop_section"; }));
}

TEST(SopPlugin, IngestStampsSectionsAndAQuestionNamingOneGetsItFirst) {
  test_support::TempEngine s("sop_plugin");
  app::IngestOptions o;
  o.plugin_namespace = "sop";
  const auto rep = s.engine->ingest({write_sop(s.dir).string()}, o);
  ASSERT_GT(rep.rows, 3u);
  EXPECT_EQ(s.engine->namespace_counts().count("sop"), 1u);

  search::RetrievalRequest q;
  q.query = "roles in the calibration of the balance";
  q.top_k = 5;
  q.plugin_namespace = "core";
  const auto core = s.engine->search(q);
  ASSERT_FALSE(core.hits.empty());
  EXPECT_NE(section_of(core.hits[0]), "responsibilities") << core.hits[0].id;  // words alone: the procedure
  q.plugin_namespace = "sop";
  const auto sop = s.engine->search(q);
  ASSERT_FALSE(sop.hits.empty());
  EXPECT_EQ(section_of(sop.hits[0]), "responsibilities") << sop.hits[0].id;
  EXPECT_EQ(sop.metadata.value("rerank_policy", ""), "domain");

  // The stamped field is a facet in every namespace.
  q.query = "calibration";
  q.facets = {{"sop_section", "records"}};
  const auto records = s.engine->search(q);
  ASSERT_FALSE(records.hits.empty());
  for (const auto& h : records.hits) EXPECT_EQ(section_of(h), "records") << h.id;
  // auto: the store's documents are in the plugin's namespace.
  EXPECT_EQ(s.engine->resolve_namespace("auto"), "sop");
}

TEST(SopPlugin, ItsToolIsListedWhenItsNamespaceIsTheDefaultAndItsCommandIsRegistered) {
  test_support::TempEngine s("sop_tools");
  mcp::ToolSet sop_tools(*s.engine, "sop");
  const auto* tool = sop_tools.find("sop_sections");
  ASSERT_NE(tool, nullptr);
  const json r = sop_tools.call(*tool, json::object(), {});
  ASSERT_FALSE(r.value("isError", false)) << r.dump();
  const json sections = r["structuredContent"]["sections"];
  EXPECT_TRUE(std::any_of(sections.begin(), sections.end(), [](const json& x) { return x["section"] == "procedure"; }))
      << sections.dump();
  EXPECT_NE(mcp::eagle_server_info("sop").instructions.find("sop_sections"), std::string::npos);
  mcp::ToolSet core_tools(*s.engine, "core");
  EXPECT_EQ(core_tools.find("sop_sections"), nullptr);  // exposure rule G3

  CLI::App app;
  app::GlobalFlags g;
  std::vector<app::Command> commands;
  for (const auto* p : plugin::builtin_plugins()) p->add_commands(app, g, commands);
  EXPECT_NE(app.get_subcommand("sop-sections"), nullptr);
}

// A plugin registered after an engine was made has no slot in it: its namespace is an
// error there (not a crash); an engine made afterwards has it.
TEST(SopPlugin, APluginRegisteredLateIsRefusedByOlderEnginesOnly) {
  struct Late : plugin::Plugin {
    std::string name() const override { return "late"; }
    std::string description() const override { return "registered after an engine"; }
    std::unique_ptr<plugin::Instance> attach(const plugin::Host&) const override {
      struct None : plugin::Instance {
        void subscribe() override {}
      };
      return std::make_unique<None>();
    }
  };
  static const Late late;
  test_support::TempEngine before("sop_late_before");
  plugin::register_plugin(late);
  try {
    before.engine->plugin_instance("late");
    ADD_FAILURE() << "an engine made before the plugin attached it";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("registered after"), std::string::npos) << e.what();
  }
  test_support::TempEngine after("sop_late_after");
  EXPECT_NE(after.engine->plugin_instance("late"), nullptr);
}

}  // namespace
}  // namespace eagle
