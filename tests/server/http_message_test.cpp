// The server's own request parsing (server/http_message.h): targets, multipart bodies
// and the bytes of a response.
#include <gtest/gtest.h>

#include "eagle/app/request_json.h"
#include "eagle/server/http_message.h"

using namespace eagle::server;

TEST(HttpMessage, TargetsDecodeThePathOnceAndTheQueryAsAForm) {
  HttpRequest r;
  ASSERT_TRUE(parse_target("/documents/jats%2Fpone.0046493.nxml?kb_name=a+b&limit=5&flag&x=%26y", r));
  EXPECT_EQ(r.path, "/documents/jats/pone.0046493.nxml");  // %2F and / are one rule
  EXPECT_EQ(r.get_param_value("kb_name"), "a b");
  EXPECT_EQ(r.get_param_value("limit"), "5");
  EXPECT_TRUE(r.has_param("flag"));
  EXPECT_EQ(r.get_param_value("x"), "&y");
  ASSERT_TRUE(parse_target("/a+b%2B", r));
  EXPECT_EQ(r.path, "/a+b+");  // '+' is a plus in a path
  EXPECT_FALSE(parse_target("/a%2", r));
  EXPECT_FALSE(parse_target("/a%zz", r));
  EXPECT_FALSE(parse_target("/a%00b", r));
  EXPECT_FALSE(parse_target("/a?x=%0", r));
  EXPECT_FALSE(parse_target("http://evil/a", r));
  EXPECT_FALSE(parse_target("", r));
}

TEST(HttpMessage, HeadersCompareWithoutCase) {
  HttpRequest r;
  r.headers = {{"host", "a"}, {"HOST", "b"}, {"Content-Type", "Multipart/Form-Data; boundary=x"}};
  EXPECT_EQ(r.get_header_value_count("Host"), 2u);
  EXPECT_EQ(r.get_header_value("Host"), "a");
  EXPECT_TRUE(r.is_multipart_form_data());
  EXPECT_FALSE(r.has_header("Origin"));
}

namespace {
HttpRequest form(const std::string& type, const std::string& body) {
  HttpRequest r;
  r.headers = {{"Content-Type", type}};
  r.body = body;
  return r;
}
}  // namespace

TEST(HttpMessage, MultipartPartsKeepTheirNamesFileNamesAndBytes) {
  auto r = form("multipart/form-data; boundary=\"b q\"",
                "preamble\r\n--b q  \r\nContent-Disposition: form-data; name=\"file\"; filename=\"a \\\"1\\\".pdf\"\r\n"
                "Content-Type: application/pdf\r\n\r\n%PDF\r\n--b\r\nx\r\n--b q\r\n"
                "content-disposition: form-data; name=kb_name\r\n\r\nka\r\n--b q\r\n"
                "Content-Disposition: form-data; name=\"file\"; filename=\"b.jsonl\"\r\n\r\n\r\n--b q--\r\nepilogue");
  parse_multipart(r, 10);
  ASSERT_EQ(r.files.size(), 3u);
  EXPECT_EQ(r.files.count("file"), 2u);
  const auto& pdf = r.files.find("file")->second;
  EXPECT_EQ(pdf.filename, "a \"1\".pdf");
  EXPECT_EQ(pdf.content_type, "application/pdf");
  EXPECT_EQ(pdf.content, "%PDF\r\n--b\r\nx");  // a near-boundary inside the content is content
  EXPECT_EQ(r.get_file_value("kb_name").content, "ka");
  EXPECT_EQ(std::next(r.files.find("file"))->second.content, "");
}

TEST(HttpMessage, MalformedMultipartBodiesAre400sNamingTheFault) {
  auto refused = [](const std::string& type, const std::string& body, size_t max_parts = 10) {
    auto r = form(type, body);
    try {
      parse_multipart(r, max_parts);
    } catch (const eagle::app::RequestError& e) {
      EXPECT_EQ(e.status, 400);
      return e.message;
    }
    return std::string("accepted");
  };
  const std::string part = "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n";
  EXPECT_NE(refused("multipart/form-data", part + "--x--").find("boundary"), std::string::npos);
  EXPECT_NE(refused("multipart/form-data; boundary=" + std::string(71, 'x'), part).find("boundary"), std::string::npos);
  EXPECT_NE(refused("multipart/form-data; boundary=y", part + "--x--").find("no part"), std::string::npos);
  EXPECT_NE(refused("multipart/form-data; boundary=x", part).find("not closed"), std::string::npos);  // no close delimiter
  EXPECT_NE(refused("multipart/form-data; boundary=x", "--xz\r\n" + part.substr(5) + "--x--").find("CRLF"),
            std::string::npos);
  EXPECT_NE(refused("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv")
                .find("not closed"),
            std::string::npos);
  EXPECT_NE(refused("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nv\r\n--x--")
                .find("form-data"),
            std::string::npos);
  EXPECT_NE(refused("multipart/form-data; boundary=x", "--x\r\nContent-Type: text/plain\r\n\r\nv\r\n--x--").find("name"),
            std::string::npos);
  EXPECT_NE(refused("multipart/form-data; boundary=x", part + part + part + "--x--", 2).find("more than 2"),
            std::string::npos);
  EXPECT_EQ(refused("multipart/form-data; boundary=x", part + "--x--"), "accepted");
}

TEST(HttpMessage, ResponsesCarryTheirLengthOrChunkedFramingAndNoInjectedLines) {
  HttpResponse r;
  r.status = 404;
  r.set_header("X-Note", "a\r\nSet-Cookie: evil");
  r.set_content("{}", "application/json");
  EXPECT_EQ(serialize_response(r, false, false),
            "HTTP/1.1 404 Not Found\r\nX-Note: aSet-Cookie: evil\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(serialize_response(r, true, true),
            "HTTP/1.1 404 Not Found\r\nX-Note: aSet-Cookie: evil\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nConnection: close\r\n\r\n");
  HttpResponse events;
  events.set_content("event: done\ndata: {}\n\n", "text/event-stream");
  events.chunked = true;
  EXPECT_EQ(serialize_response(events, false, false),
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            "16\r\nevent: done\ndata: {}\n\n\r\n0\r\n\r\n");
}
