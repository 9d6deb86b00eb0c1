// SPL label parsing on the openFDA fixtures in shared/data/spl.
#include "eagle/biomed/ingest/spl.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "eagle/core/error.h"
#include "ingest_test_support.h"

using namespace eagle::biomed;
using eagle::biomed::testing::present;
using eagle::biomed::testing::shared_file;
using eagle::biomed::testing::spl_label_files;

namespace {

SplLabel load(const std::string& name) {
  return parse_spl_file(shared_file("spl/" + name));
}

const SplSection* by_title(const SplLabel& l, const std::string& title) {
  for (const auto& s : l.sections)
    if (s.title == title) return &s;
  return nullptr;
}

bool has_section(const SplLabel& l, const std::string& biomed_section) {
  return std::any_of(l.sections.begin(), l.sections.end(),
                     [&](const SplSection& s) { return s.biomed_section == biomed_section; });
}

bool contains_ci(const std::vector<std::string>& names, const std::string& lower) {
  for (auto n : names) {
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
    if (n == lower) return true;
  }
  return false;
}

// A minimal SPL document around the given structuredBody components.
std::string spl_doc(const std::string& body, const std::string& title = "<title>Test label</title>") {
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<document xmlns="urn:hl7-org:v3">
  <id root="doc-1"/>
  <code code="34391-3" displayName="HUMAN PRESCRIPTION DRUG LABEL"/>
  )" + title +
         R"(
  <effectiveTime value="20200102"/>
  <setId root="set-1"/>
  <versionNumber value="3"/>
  <component><structuredBody>)" +
         body + R"(</structuredBody></component>
</document>)";
}

std::string section(const std::string& code, const std::string& title, const std::string& inner) {
  return "<component><section><code code=\"" + code + "\" displayName=\"X\"/>" +
         (title.empty() ? "" : "<title>" + title + "</title>") + inner + "</section></component>";
}

}  // namespace

TEST(SplParser, AllRealLabelsParse) {
  for (const auto& name : spl_label_files()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(present(shared_file("spl/" + name)));
    const SplLabel l = load(name);
    EXPECT_EQ(l.file_name, name);
    EXPECT_FALSE(l.document_id.empty());
    EXPECT_FALSE(l.set_id.empty());
    EXPECT_FALSE(l.version.empty());
    EXPECT_GT(l.year(), 2000);
    EXPECT_FALSE(l.display_title().empty());
    EXPECT_FALSE(l.product_names.empty() && l.generic_names.empty()) << "no drug names";
    ASSERT_FALSE(l.sections.empty());
    for (const auto& s : l.sections) {
      EXPECT_EQ(&s - l.sections.data(), static_cast<std::ptrdiff_t>(s.index));
      EXPECT_FALSE(s.path.empty());
      EXPECT_FALSE(s.biomed_section.empty()) << s.path;
      if (s.parent >= 0) {
        const auto& p = l.sections[static_cast<size_t>(s.parent)];
        EXPECT_LT(p.index, s.index);
        EXPECT_EQ(s.depth, p.depth + 1);
        EXPECT_EQ(s.path.rfind(p.path + "/", 0), 0u) << s.path << " under " << p.path;
      }
    }
  }
}

TEST(SplParser, HumiraHasBoxedWarningWarningsAndNames) {
  ASSERT_TRUE(present(shared_file("spl/humira.xml")));
  const SplLabel l = load("humira.xml");
  EXPECT_EQ(l.document_id, "2c9fb32d-4b1b-b5da-4bdf-6b06908ba8b3");
  EXPECT_EQ(l.set_id, "608d4f0d-b19f-46d3-749a-7159aa5f933d");
  EXPECT_EQ(l.version, "1560");
  EXPECT_EQ(l.effective_time, "20130930");
  EXPECT_EQ(l.year(), 2013);
  EXPECT_EQ(l.document_type, "HUMAN PRESCRIPTION DRUG LABEL");
  // <br/> becomes a space and whitespace collapses.
  EXPECT_NE(
      l.title.find(
          "for HUMIRA. HUMIRA (adalimumab) injection, for subcutaneous use Initial U.S. Approval: 2002"),
      std::string::npos)
      << l.title;
  EXPECT_EQ(l.product_names, std::vector<std::string>{"Humira"});
  ASSERT_FALSE(l.generic_names.empty());
  EXPECT_EQ(l.generic_names.front(), "Adalimumab");
  // The kit's alcohol swab has no active ingredient: not a drug of this label.
  EXPECT_FALSE(contains_ci(l.generic_names, "isopropyl alcohol"));
  EXPECT_TRUE(has_section(l, "boxed_warning"));
  EXPECT_TRUE(has_section(l, "warnings_and_precautions"));
  EXPECT_TRUE(has_section(l, "indications_and_usage"));
  EXPECT_TRUE(has_section(l, "adverse_reactions"));

  const SplSection* boxed = by_title(l, "WARNING: SERIOUS INFECTIONS AND MALIGNANCY");
  ASSERT_NE(boxed, nullptr);
  EXPECT_EQ(boxed->loinc_code, "34066-1");
  EXPECT_EQ(boxed->biomed_section, "boxed_warning");
  EXPECT_NE(boxed->text.find("SERIOUS INFECTIONS"), std::string::npos);

  // Nested, coded 42229-5 (unclassified): inherits its parent's section.
  const SplSection* infections = by_title(l, "5.1 Serious Infections");
  ASSERT_NE(infections, nullptr);
  EXPECT_EQ(infections->loinc_code, "42229-5");
  EXPECT_EQ(infections->path, "5 WARNINGS AND PRECAUTIONS/5.1 Serious Infections");
  EXPECT_EQ(infections->biomed_section, "warnings_and_precautions");
  EXPECT_EQ(infections->depth, 1u);
  EXPECT_GT(infections->text.size(), 4000u);
  EXPECT_EQ(infections->text.find("  "), std::string::npos) << "whitespace not collapsed";

  // Highlights excerpt kept apart from the section text.
  const SplSection* indications = by_title(l, "1 INDICATIONS AND USAGE");
  ASSERT_NE(indications, nullptr);
  EXPECT_TRUE(indications->text.empty());
  EXPECT_FALSE(indications->highlight.empty());

  // Tables are flattened row by row, cells joined by " | ".
  const SplSection* trials = by_title(l, "6.1 Clinical Trials Experience");
  ASSERT_NE(trials, nullptr);
  EXPECT_NE(trials->text.find(" | "), std::string::npos);

  // A '/' inside a title does not split the path.
  const SplSection* supplied = by_title(l, "16 HOW SUPPLIED/STORAGE AND HANDLING");
  ASSERT_NE(supplied, nullptr);
  EXPECT_EQ(supplied->path, "16 HOW SUPPLIED-STORAGE AND HANDLING");
  EXPECT_EQ(supplied->biomed_section, "how_supplied");
}

TEST(SplParser, LipitorIsAtorvastatin) {
  for (const char* name : {"lipitor-orig.xml", "lipitor-repack.xml"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(present(shared_file(std::string("spl/") + name)));
    const SplLabel l = load(name);
    EXPECT_EQ(l.product_names, std::vector<std::string>{"Lipitor"});  // "Lipitor\n   " collapsed
    EXPECT_TRUE(contains_ci(l.generic_names, "atorvastatin")) << "active moiety";
    EXPECT_TRUE(contains_ci(l.generic_names, "atorvastatin calcium trihydrate")) << "active ingredient";
    EXPECT_TRUE(has_section(l, "warnings_and_precautions"));
    EXPECT_TRUE(has_section(l, "dosage_and_administration"));
  }
  const SplLabel orig = load("lipitor-orig.xml");
  EXPECT_EQ(orig.generic_names.front(), "atorvastatin calcium");  // genericMedicine first
}

TEST(SplParser, NoTitleLabelUsesProductNameForDisplay) {
  ASSERT_TRUE(present(shared_file("spl/no-title.xml")));
  const SplLabel l = load("no-title.xml");
  EXPECT_TRUE(l.title.empty());
  EXPECT_EQ(l.display_title(), "Haloperidol");
  EXPECT_TRUE(contains_ci(l.generic_names, "haloperidol"));
  EXPECT_TRUE(has_section(l, "boxed_warning"));
}

TEST(SplParser, OtcWarningsSubsectionsMapToOtcCodes) {
  ASSERT_TRUE(present(shared_file("spl/cough.xml")));
  const SplLabel l = load("cough.xml");
  EXPECT_EQ(l.title, "Drug Facts");
  EXPECT_EQ(l.product_names, std::vector<std::string>{"TRIAMINICChildrens Night Time Cold and Cough"});
  EXPECT_TRUE(contains_ci(l.generic_names, "diphenhydramine"));
  EXPECT_TRUE(contains_ci(l.generic_names, "phenylephrine"));
  for (const char* s :
       {"indications_and_usage", "warnings", "do_not_use", "ask_doctor", "ask_doctor_or_pharmacist",
        "when_using", "stop_use", "dosage_and_administration", "active_ingredient", "purpose"})
    EXPECT_TRUE(has_section(l, s)) << s;
  const SplSection* do_not_use = by_title(l, "Do not use");
  ASSERT_NE(do_not_use, nullptr);
  EXPECT_EQ(do_not_use->path, "Warnings/Do not use");
  // Top-level, coded 42229-5, title not a known heading: the normalised title.
  const SplSection* other = by_title(l, "Other informaton");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->biomed_section, "other_informaton");
}

TEST(SplParser, IndexingDocumentNamesItsSubstance) {
  ASSERT_TRUE(present(shared_file("spl/METHOXSALEN.xml")));
  const SplLabel l = load("METHOXSALEN.xml");
  EXPECT_TRUE(l.product_names.empty());
  EXPECT_EQ(l.generic_names, std::vector<std::string>{"METHOXSALEN"});
  ASSERT_EQ(l.sections.size(), 1u);
  EXPECT_EQ(l.sections[0].biomed_section, "indexing_data");
  EXPECT_EQ(l.sections[0].path, "SPL indexing data elements section");  // untitled: the LOINC display name
}

TEST(SplParser, ViagraIsSildenafil) {
  const std::string name = "64f8040f-938d-4236-8e22-c838c9b5f8da.xml";
  ASSERT_TRUE(present(shared_file("spl/" + name)));
  const SplLabel l = load(name);
  EXPECT_EQ(l.product_names, std::vector<std::string>{"Viagra"});
  EXPECT_TRUE(contains_ci(l.generic_names, "sildenafil"));
  EXPECT_TRUE(has_section(l, "contraindications"));
}

TEST(SplParser, NonLabelXmlIsRejected) {
  // shared/data/spl/*_otc-bars.xml are zbar barcode dumps: several roots, a truncated
  // one, an empty one. Each fails with an eagle::Error naming the file.
  for (int i = 1; i <= 6; ++i) {
    const std::string name = std::to_string(i) + "_otc-bars.xml";
    SCOPED_TRACE(name);
    ASSERT_TRUE(present(shared_file("spl/" + name)));
    try {
      load(name);
      ADD_FAILURE() << "parsed a non-label";
    } catch (const eagle::Error& e) {
      EXPECT_EQ(e.code(), eagle::ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  try {
    load("6_otc-bars.xml");
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
  // Well-formed XML that is not SPL.
  try {
    parse_spl("<barcodes xmlns='http://zbar.sourceforge.net/2008/barcode'/>", "one.xml");
    ADD_FAILURE();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not an SPL document (<barcodes>"), std::string::npos) << e.what();
  }
}

TEST(SplParser, MalformedXmlNamesFileAndLine) {
  const std::string xml =
      "<?xml version=\"1.0\"?>\n<document xmlns=\"urn:hl7-org:v3\">\n  <id root=\"x\"/>\n"
      "  <title>Broken</titel>\n</document>\n";
  try {
    parse_spl(xml, "labels/bad.xml");
    FAIL() << "malformed XML parsed";
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("labels/bad.xml:4: malformed XML"), std::string::npos) << e.what();
  }
  // The real multi-root barcode file: "Extra content" where the second root starts.
  ASSERT_TRUE(present(shared_file("spl/1_otc-bars.xml")));
  try {
    load("1_otc-bars.xml");
    FAIL();
  } catch (const eagle::Error& e) {
    EXPECT_NE(std::string(e.what()).find("1_otc-bars.xml:5: malformed XML"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_spl_file(shared_file("spl/no-such-label.xml")), eagle::Error);
  try {
    parse_spl_file(shared_file("spl/no-such-label.xml"));
  } catch (const eagle::Error& e) {
    EXPECT_EQ(e.code(), eagle::ErrorCode::not_found);
  }
  // No document id: chunk ids could not be deterministic.
  EXPECT_THROW(parse_spl("<document xmlns=\"urn:hl7-org:v3\"><title>t</title></document>", "noid.xml"),
               eagle::Error);
}

TEST(SplParser, LoincTableCoversTheDocumentedCodes) {
  const auto& m = LoincSectionMap::defaults();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"34067-9", "indications_and_usage"},
      {"34068-7", "dosage_and_administration"},
      {"34071-1", "warnings"},
      {"43685-7", "warnings_and_precautions"},
      {"34066-1", "boxed_warning"},
      {"34070-3", "contraindications"},
      {"34084-4", "adverse_reactions"},
      {"34073-7", "drug_interactions"},
      {"34088-5", "overdosage"},
      {"34089-3", "description"},
      {"34090-1", "clinical_pharmacology"},
      {"34092-7", "clinical_studies"},
      {"43678-2", "dosage_forms_and_strengths"},
      {"42232-9", "precautions"},
      {"34076-0", "patient_information"},
      {"43684-0", "use_in_specific_populations"},
      {"34069-5", "how_supplied"},
      {"51945-4", "package_label"},
      {"42229-5", "spl_unclassified"},
      {"50570-1", "do_not_use"},
      {"50569-3", "ask_doctor"},
      {"50568-5", "ask_doctor_or_pharmacist"},
      {"50567-7", "when_using"},
      {"50566-9", "stop_use"},
      {"34072-9", "general_precautions"}};
  for (const auto& [code, name] : expected) EXPECT_EQ(m.find(code), name) << code;
  EXPECT_EQ(m.find("00000-0"), "");
}

TEST(SplParser, EveryCodeInTheRealLabelsIsMapped) {
  for (const auto& name : spl_label_files()) {
    ASSERT_TRUE(present(shared_file("spl/" + name)));
    for (const auto& s : load(name).sections)
      EXPECT_NE(LoincSectionMap::defaults().find(s.loinc_code), "")
          << name << ": " << s.loinc_code << " " << s.loinc_name;
  }
}

TEST(SplParser, SectionResolutionOrder) {
  const std::string body =
      section("43685-7", "5 WARNINGS AND PRECAUTIONS",
              "<component><section><code code=\"42229-5\"/><title>5.1 Serious Infections</title>"
              "<text><paragraph>Risk.</paragraph></text></section></component>") +
      section("42229-5", "Warnings", "<text>OTC warnings.</text>") +
      section("99999-9", "Other Information", "<text>x</text>") + section("42229-5", "", "<text>y</text>") +
      section("34067-9", "1 INDICATIONS AND USAGE", "<text>z</text>");
  const SplLabel l = parse_spl(spl_doc(body), "mem.xml");
  ASSERT_EQ(l.sections.size(), 6u);
  EXPECT_EQ(l.sections[0].biomed_section, "warnings_and_precautions");  // 1. the code
  EXPECT_EQ(l.sections[1].biomed_section, "warnings_and_precautions");  // 2. inherited from the parent
  EXPECT_EQ(l.sections[1].parent, 0);
  EXPECT_EQ(l.sections[2].biomed_section, "warnings");           // 3. canonical title
  EXPECT_EQ(l.sections[3].biomed_section, "other_information");  // 4. normalised title
  EXPECT_EQ(l.sections[4].biomed_section, "spl_unclassified");   // 5. nothing else
  EXPECT_EQ(l.sections[5].biomed_section, "indications_and_usage");

  // The table is configurable: a caller's map overrides the defaults.
  LoincSectionMap custom = LoincSectionMap::defaults();
  custom.set("99999-9", "site_specific");
  custom.set("43685-7", "warnings");
  const SplLabel c = parse_spl(spl_doc(body), "mem.xml", custom);
  EXPECT_EQ(c.sections[0].biomed_section, "warnings");
  EXPECT_EQ(c.sections[1].biomed_section, "warnings");
  EXPECT_EQ(c.sections[3].biomed_section, "site_specific");
}

TEST(SplParser, TextFlattensParagraphsListsAndTables) {
  const std::string inner = R"(<text>
    <paragraph>First   paragraph
      spans lines.</paragraph>
    <paragraph><content styleCode="bold">W</content>ARNING: inline markup stays one word<sup>1</sup>.</paragraph>
    <list><item>one</item><item>two<br/>lines</item></list>
    <table><caption>Table 1: Doses</caption>
      <thead><tr><th>Dose</th><th>Rate</th></tr></thead>
      <tbody><tr><td><paragraph>10 mg</paragraph></td><td>5%</td></tr>
             <tr><td>20&#160;mg</td><td/></tr></tbody>
    </table>
    <renderMultiMedia referencedObject="img1"/>
  </text>)";
  const SplLabel l = parse_spl(spl_doc(section("34068-7", "2 DOSAGE", inner), "<title/>"), "mem.xml");
  ASSERT_EQ(l.sections.size(), 1u);
  EXPECT_EQ(l.sections[0].text,
            "First paragraph spans lines.\n"
            "WARNING: inline markup stays one word1.\n"
            "one\ntwo\nlines\n"
            "Table 1: Doses\nDose | Rate\n10 mg | 5%\n20 mg");
  EXPECT_TRUE(l.title.empty());
  EXPECT_EQ(l.display_title(), "mem.xml");  // no title, no product: the file name
}
